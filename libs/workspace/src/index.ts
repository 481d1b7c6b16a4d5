export { BinaryTransfer } from "./BinaryTransfer.js"
export {
  type DownloadError,
  type DownloadedFile,
  downloadBinaryFile
} from "./binary/downloadBinaryFile.js"
export {
  decodeStrictBase64,
  isStrictBase64,
  maxEncodedLength
} from "./binary/StrictBase64.js"
export {
  type UploadError,
  uploadBinaryFile
} from "./binary/uploadBinaryFile.js"
export {
  type ChannelContext,
  resolve
} from "./ChannelContext.js"
export { compareCodePoints, sortByCodePoint } from "./CodePointOrder.js"
export { mimeTypeOf } from "./channels/statFile.js"
export {
  openDirectory,
  openDirectorySync,
  openParent,
  WalkFailure
} from "./DescriptorWalk.js"
export {
  FileIngress,
  FileIngressDisabledLayer,
  type FileIngressRequest,
  type IngressSource
} from "./FileIngress.js"
export {
  entryTypeOfDirent,
  entryTypeOfMode,
  isDirectory,
  isRegular,
  isSymlink,
  timestampOf,
  timestampOfSeconds
} from "./FileKind.js"
export {
  guardName,
  type LeaseError,
  LeaseManager,
  lockFileName
} from "./LeaseManager.js"
export {
  type GuardState,
  guardPresence,
  readGuardAt,
  removeGuardAt,
  writeGuardAt
} from "./lease/GuardFile.js"
export {
  type HeldLease,
  type LeaseHolder,
  type LeaseHolderOptions,
  makeLeaseHolder
} from "./lease/LeaseHolder.js"
export {
  type LockModes,
  lockModes,
  lockPathUnsafe,
  openLockDirectory,
  prepareLockDirectory
} from "./lease/LockDirectory.js"
export {
  holdLockFile,
  type LockFileOptions,
  type LockFileProblem,
  LockFileRefused,
  lockExclusiveSync,
  type OpenLockFile,
  openLockFileSync
} from "./lease/LockFile.js"
export { MAX_GUARD_BYTES, RecoveryGuard, RecoveryGuardJson } from "./lease/RecoveryGuard.js"
export {
  leaseHolderMutations,
  Mutations
} from "./Mutations.js"
export {
  applyEdit,
  applyEdits,
  type EditOutcome,
  type PlannedEdit
} from "./mutations/EditPlan.js"
export { copyMetadata } from "./mutations/Metadata.js"
export {
  authorize,
  checkNamedRevision,
  type MutationContext,
  type MutationParent,
  openMutationParent,
  syncDirectory
} from "./mutations/MutationContext.js"
export {
  createTempFile,
  type TempFile,
  tempName,
  writeAll
} from "./mutations/TempFile.js"
export {
  isStorableText,
  UTF8_BOM,
  utf8Length
} from "./mutations/TextContent.js"
export {
  type At,
  codeOf,
  isPermissionReason,
  mapOsError,
  reasonOf,
  toWalkError
} from "./OsError.js"
export { ReadChannels } from "./ReadChannels.js"
export {
  type OpenedFile,
  openRegularFile,
  openRegularFileSync
} from "./RegularFile.js"
export { revisionOf } from "./Revision.js"
export {
  type RawMatch,
  type RipgrepOptions,
  type RipgrepOutcome,
  ripgrepArgs,
  runRipgrep
} from "./Ripgrep.js"
export { toSubmitPathError, walkStartDirectory } from "./StartDirectory.js"
export {
  decodeUtf8,
  type PageRequest,
  type PageResult,
  readFully,
  readPage
} from "./TextPage.js"
export {
  isLargeDirectory,
  type ListingRequest,
  orderOf,
  TreeWalk,
  type WalkVisitor
} from "./TreeWalk.js"
export { WorkdirRoots } from "./WorkdirRoots.js"
