export * from "./BinaryTransfer.js"
export * from "./binary/downloadBinaryFile.js"
export * from "./binary/StrictBase64.js"
export * from "./binary/uploadBinaryFile.js"
export * from "./ChannelContext.js"
export * from "./CodePointOrder.js"
export { mimeTypeOf } from "./channels/statFile.js"
export * from "./DescriptorWalk.js"
export * from "./FileIngress.js"
export * from "./FileKind.js"
export * from "./LeaseManager.js"
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
export * from "./Mutations.js"
export * from "./mutations/EditPlan.js"
export * from "./mutations/Metadata.js"
export * from "./mutations/MutationContext.js"
export * from "./mutations/TempFile.js"
export * from "./mutations/TextContent.js"
export * from "./OsError.js"
export * from "./ReadChannels.js"
export * from "./RegularFile.js"
export * from "./Revision.js"
export * from "./Ripgrep.js"
export * from "./TextPage.js"
export * from "./TreeWalk.js"
export * from "./WorkdirRoots.js"
