export {
  AGENT_ERROR_CODES,
  AGENT_ERRORS,
  AgentBridgeError,
  AgentBridgeProtocolError,
  AgentBridgeUnavailable,
  AgentDisabled,
  type AgentError,
  AgentErrorCode,
  AgentEventLimitReached,
  AgentEventTooLarge,
  AgentIdempotencyConflict,
  AgentInteractionExpired,
  AgentInteractionTimedOut,
  AgentInteractionTooLarge,
  AgentMessageTooLarge,
  AgentProfileNotAllowed,
  AgentPromptTooLarge,
  AgentProviderDisconnected,
  AgentProviderError,
  AgentProviderInactive,
  AgentResultNotRetrievable,
  AgentResultStorageError,
  AgentResultTooLarge,
  AgentRuntimeNotAllowed,
  AgentRuntimeNotReady,
  AgentRuntimeUnavailable,
  AgentSessionNotResumable,
  AgentStorageLimitReached,
  AgentTaskExists,
  AgentTaskLimitReached,
  AgentTaskNotActive,
  AgentTaskNotFound,
  AgentTaskTerminal,
  AgentTaskTimedOut,
  agentError,
  type BridgeCallError,
  BridgeClosed,
  BridgeProtocolError,
  BridgeRestarted,
  BridgeSchedulingFailed,
  BridgeShutdown,
  InvalidApprovalDecision,
  InvalidLimit,
  InvalidQuestionAnswer,
  InvalidRequest,
  InvalidResultLimit,
  InvalidResultOffset,
  InvalidTaskTransition,
  InvalidWorkdirPath,
  LockPathUnsafe,
  MethodNotFound,
  PeerNotAuthorized,
  PermissionOutsidePolicy,
  ProtocolVersionUnsupported,
  RelayedBridgeError,
  RequestAlreadyResolved,
  RequestExists,
  RequestNotFound,
  RequestPending,
  RequestStale,
  RequestTooLarge,
  ResponseTooLarge,
  SocketDirectoryUnsafe,
  SocketPathInUse,
  StateDirectoryUnsafe,
  WorkdirPathNotFound
} from "./agent/AgentErrors.js"
export {
  DEFAULT_EVENTS_PAGE,
  MAX_EVENTS_PAGE,
  MAX_FILE_CHANGE_DIFF_BYTES,
  MAX_FILE_CHANGES_DIFF_BYTES,
  MAX_INTERACTION_BYTES,
  MAX_MESSAGE_BYTES,
  MAX_MODEL_BYTES,
  MAX_RESULT_CHUNK_BYTES,
  MAX_TOKEN_BYTES,
  RESULT_PREVIEW_BYTES
} from "./agent/ContractLimits.js"
export {
  DEFAULT_BOUNDS,
  type FileChangeSource,
  fitApproval,
  hunk,
  type PreviewBounds,
  previewFileChanges,
  redactDiffText,
  retainedDiff,
  truncationMarker,
  wholeFileDiff
} from "./agent/FileChangePreview.js"
export {
  Answer,
  ApprovalCategory,
  ApprovalPayload,
  ApprovalResolution,
  checkAnswers,
  checkDecision,
  Decision,
  FileChange,
  FileChangeKind,
  PendingRequestView,
  Question,
  QuestionOption,
  QuestionPayload,
  QuestionResolution,
  RequestedPermission,
  RequestKind,
  RequestStatus
} from "./agent/Interactions.js"
export {
  canonicalJson,
  Manifest,
  sha256Hex
} from "./agent/Manifest.js"
export {
  boundedCatalog,
  boundedModel,
  boundedText,
  fitsUtf8Bytes,
  MAX_MODEL_DESCRIPTION_BYTES,
  MAX_MODEL_ITEM_BYTES,
  MAX_MODEL_LIST_ITEMS,
  MAX_MODEL_NAME_BYTES,
  MAX_MODELS,
  ModelAdvice,
  ModelCatalog,
  ModelDiscovery,
  ModelEntry,
  ModelReasoning,
  ModelScope,
  ModelStatus,
  RuntimeModelsResult
} from "./agent/Models.js"
export {
  InFlightRecovery,
  Profile,
  profileRank,
  RuntimeInfo,
  RuntimeName
} from "./agent/Runtime.js"
export { TaskEvent } from "./agent/TaskEvent.js"
export {
  allowedTransitions,
  canTransition,
  isTerminal,
  isWaiting,
  TaskStatus,
  TerminalStatus,
  transition
} from "./agent/TaskState.js"
export {
  ResultSummary,
  TaskView
} from "./agent/TaskView.js"
export {
  CATALOG_VERSION,
  Completeness,
  DIAGNOSTIC_LIMITS,
  DiagnosticOperation,
  DiagnosticRollups,
  DiagnosticSeal,
  DiagnosticsSnapshot,
  DiagnosticsTaskResult,
  InteractionClass,
  LeaseOutcome,
  NotRetainedReason,
  OperationKind,
  OperationOutcome,
  RecorderCounters,
  RecorderState,
  RecoveryOutcome,
  RuntimeFamily,
  runtimeFamilyOf,
  SealReason,
  sealReasonOf,
  TaskTrace,
  TerminalOutcome
} from "./diagnostics/Catalog.js"
export {
  BinaryFileTooLarge,
  BinarySourceConflict,
  BinarySourceRequired,
  BinaryTransferDisabled,
  ExpectedRevisionNotAllowed,
  ExpectedRevisionRequired,
  InvalidBase64
} from "./errors/BinaryErrors.js"
export {
  FILESYSTEM_ERRORS,
  FilesystemErrorCode,
  type FilesystemFrozenError,
  renderError
} from "./errors/ErrorCode.js"
export type * from "./errors/FilesystemError.js"
export { type FieldKind, FrozenErrorClass } from "./errors/FrozenErrorClass.js"
export {
  FROZEN_ERROR_CODES,
  FROZEN_ERRORS,
  type FrozenError,
  FrozenErrorCode,
  isFrozenError,
  isFrozenErrorCode
} from "./errors/FrozenErrors.js"
export {
  AddressNotAllowed,
  BinaryPayloadTooLarge,
  DnsFailed,
  FileIngressDisabled,
  type FileIngressError,
  FileIngressFailed,
  FileIngressUnavailable,
  HostNotAllowed,
  TooManyRedirects,
  UpstreamFailed,
  UrlNotAllowed
} from "./errors/IngressErrors.js"
export { InvalidArgument } from "./errors/InvalidArgument.js"
export {
  AgentLockUnavailable,
  WorkdirBusy,
  WorkdirRecoveryRequired
} from "./errors/LeaseErrors.js"
export {
  escapeControl,
  location,
  quoted,
  shown
} from "./errors/Location.js"
export {
  BinaryContentNotAllowed,
  DirectoryNotEmpty,
  EditConflict,
  MetadataPreservationFailed,
  MultipleHardlinksNotSupported,
  MutationIoError,
  ParentNotFound,
  PathAlreadyExists,
  RevisionConflict,
  RootMutationNotAllowed,
  TooManyEdits,
  WorkdirReadOnly,
  WriteTooLarge
} from "./errors/MutationErrors.js"
export {
  AccessDenied,
  DeniedPath,
  HiddenPathNotAllowed,
  NotADirectory,
  NotAFile,
  PathNotFound,
  PathOutsideWorkdir,
  ReservedPath,
  ResourceExhausted,
  SymlinkNotAllowed,
  UnsupportedFileType,
  WorkdirNotFound
} from "./errors/PathErrors.js"
export {
  BinaryFile,
  FileChangedDuringRead,
  LineTooLarge,
  READ_LIMITS,
  ReadFailed,
  type ReadLimit,
  ReadLimitExceeded,
  ResourceTooLarge,
  SearchFailed,
  SearchTimeout,
  UnsupportedTextEncoding
} from "./errors/ReadErrors.js"
export {
  HostPathRedaction,
  MAX_MESSAGE_LENGTH,
  OUTSIDE_WORKDIR,
  PATH_TEXT,
  WORKDIR_TEXT
} from "./redaction/HostPathRedaction.js"
export {
  type EnvelopeError,
  EnvelopeErrors,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION
} from "./rpc/Envelope.js"
export { type ErrorOf, type ErrorSet, errorSet, NoErrors } from "./rpc/ErrorSet.js"
export {
  PendingRequestId,
  pendingRequestId,
  type RpcRequestId,
  rpcRequestId,
  TaskId,
  taskId
} from "./rpc/Ids.js"
export {
  ApprovalErrors,
  ApprovalParams,
  BRIDGE_CONTRACT,
  BRIDGE_METHODS,
  type BridgeContract,
  type BridgeMethod,
  CancelResult,
  type DecodedParams,
  EventsErrors,
  EventsParams,
  EventsResult,
  isBridgeMethod,
  MessageErrors,
  MessageParams,
  MessageResult,
  type MethodError,
  type MethodParams,
  type MethodResult,
  QuestionErrors,
  QuestionParams,
  ResolvedResult,
  ResultReadErrors,
  ResultReadParams,
  ResultReadResult,
  RuntimeListParams,
  RuntimeListResult,
  RuntimeModelsErrors,
  RuntimeModelsParams,
  SubmitErrors,
  SubmitParams,
  SubmitResult,
  TaskIdParams
} from "./rpc/Methods.js"
export {
  DiagnosticsSnapshotParams,
  DiagnosticsTaskParams,
  LeaseListErrors,
  LeaseListParams,
  LeaseListResult,
  LeaseRecoverErrors,
  LeaseRecoverParams,
  LeaseRecoverResult,
  LeaseStatus,
  MetricSeries,
  MetricsSnapshotParams,
  MetricsSnapshotResult,
  OPERATOR_METHODS,
  TaskListErrors,
  TaskListParams,
  TaskListResult,
  TaskSummary
} from "./rpc/OperatorMethods.js"
export { errorFromWire, errorToWire, WireError } from "./rpc/WireError.js"
export {
  AnswerAgentQuestionInput,
  ListAgentModelsInput,
  ListAgentRuntimesInput,
  QuestionAnswerInput,
  ReadAgentTaskEventsInput,
  ReadAgentTaskResultInput,
  RespondAgentApprovalInput,
  SendAgentMessageInput,
  SubmitAgentTaskInput,
  TaskIdInput
} from "./tools/AgentTools.js"
export {
  DownloadBinaryFileInput,
  DownloadBinaryFileOutput,
  FileParams,
  UploadBinaryFileInput,
  UploadBinaryFileOutput
} from "./tools/BinaryTools.js"
export {
  AccessMode,
  AgentMode,
  described,
  EntryType,
  IntAtLeast,
  Pattern,
  RelativePath,
  Revision,
  Timestamp,
  WorkdirAlias,
  withDefault
} from "./tools/Fields.js"
export {
  CreateDirectoryInput,
  CreateDirectoryOutput,
  CreateTextFileInput,
  CreateTextFileOutput,
  DeleteDirectoryInput,
  DeleteDirectoryOutput,
  DeleteFileInput,
  DeleteFileOutput,
  EditTextFileInput,
  EditTextFileOutput,
  TextEdit
} from "./tools/MutationTools.js"
export {
  EntryInfo,
  type FindFilesInput,
  FindFilesOutput,
  type ListDirectoryInput,
  ListDirectoryOutput,
  ListWorkdirsInput,
  ListWorkdirsOutput,
  makeFindFilesInput,
  makeListDirectoryInput,
  makeSearchTextInput,
  ReadTextFileInput,
  ReadTextFileOutput,
  SearchMatch,
  type SearchTextInput,
  SearchTextOutput,
  StatFileInput,
  StatFileOutput,
  WorkdirInfo
} from "./tools/ReadTools.js"
export {
  CatalogMarker,
  ServerInfoInput,
  ServerInfoOutput,
  ToolGroup,
  ToolGroupCounts
} from "./tools/ServerInfoTools.js"
