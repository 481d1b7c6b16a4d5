export {
  AGENT_MODES,
  type AgentModeSetting,
  agentMode,
  agentRuntimes,
  KNOWN_RUNTIMES,
  NATIVE_RUNTIMES,
  type RuntimeName
} from "./AgentSettings.js"
export {
  BRIDGE_VARIABLES,
  type BridgeSettings,
  bridgeVariableDocs,
  checkBridgeSettings,
  loadBridgeSettings,
  loadBridgeSettingsFor,
  MAX_CONNECTIONS_LIMIT,
  MAX_EVENT_BYTES_LIMIT,
  MAX_INLINE_RESULT_BYTES,
  MAX_PROMPT_BYTES_LIMIT,
  MAX_SPOOLED_RESULT_BYTES,
  MIN_EVENT_SHARE_BYTES,
  minimumBytesPerActiveTask,
  resultShareBytes,
  taskShareBytes
} from "./BridgeSettings.js"
export {
  Configuration,
  EnvironmentConfigProvider,
  type EnvironmentSources,
  environmentSources,
  environmentWithEnvFile
} from "./Configuration.js"
export {
  ConfigurationError,
  ConfigurationErrors,
  configurationErrorAuditLine,
  configurationErrorLine,
  configurationErrorOf
} from "./ConfigurationError.js"
export {
  type ConfigurationReport,
  type ConfigurationWarning,
  type InspectOptions,
  inspectConfiguration,
  type SettingReport,
  type SettingSource
} from "./ConfigurationReport.js"
export {
  DenyPolicy,
  type PathPolicySettings,
  type PolicyVerdict
} from "./DenyPolicy.js"
export {
  ENV_FILE_MAX_BYTES,
  type EnvFileEntries,
  type EnvFileProblem,
  envFileProblemText,
  parseEnvFile,
  parseEnvFileAll
} from "./EnvFile.js"
export {
  type CompiledPattern,
  type CompileOptions,
  compile,
  compilePattern,
  fnmatch,
  matchCompiled,
  matcher
} from "./Fnmatch.js"
export {
  type Entry,
  type GlobalSettings,
  parseEntries,
  parseEntriesAll,
  type VariableDoc
} from "./GlobalSettings.js"
export {
  allowedHostsFor,
  checkHttpSettings,
  HTTP_VARIABLES,
  type HttpCheck,
  type HttpSettings,
  httpVariableDocs,
  isLoopbackHost,
  loadHttpSettings,
  loadMcpTransport,
  type McpTransport,
  maxBodyBytesFor,
  maxBodyMemoryBytesFor,
  requiredBodyBytes
} from "./HttpSettings.js"
export {
  fellBack,
  globList,
  hostList,
  isUnset,
  LOG_LEVELS,
  type LogLevel,
  lenientBool,
  lenientFloat,
  lenientInt,
  logLevel,
  type Parse,
  type ParserKind,
  strictBool,
  strictCountIn,
  strictFloatIn,
  strictInt,
  strictIntIn,
  text,
  unique
} from "./Parsers.js"
export {
  compilePathGlob,
  type GlobState,
  isPathGlob,
  matchPath,
  type PathGlob
} from "./PathGlob.js"
export {
  decideProgramArguments,
  helpText,
  type ProgramDecision,
  type ProgramIdentity
} from "./ProgramArguments.js"
export {
  EXIT_CONFIGURATION,
  EXIT_FAILURE,
  EXIT_OK,
  ExitWithCode,
  exitTeardown,
  type ProgramExit,
  withExitCode
} from "./ProgramExit.js"
export {
  joinComponents,
  type NormalizedPath,
  normalizeRequestPath
} from "./RequestPath.js"
export {
  DISABLED_SENTINEL,
  isReservedName,
  RESERVED_RG_EXCLUDES,
  TEMP_PREFIX
} from "./ReservedNames.js"
export {
  type ResolvedPath,
  resolvePath
} from "./ResolvedPath.js"
export {
  BASE_DIRECTORY_VARIABLES,
  BRIDGE_DIRECTORY_NAME,
  type PathOrigin,
  type ResolvedRuntimePath,
  resolveBridgeSocket,
  resolveLockDir,
  resolveStateDir,
  SYSTEM_BRIDGE_SOCKET,
  SYSTEM_LOCK_DIR
} from "./RuntimePaths.js"
export {
  type ConfigurationCheck,
  checkServerConfiguration,
  configurationVariableNames,
  type Lookup,
  parseServerConfiguration,
  type ServerConfiguration,
  SLOT_COUNT
} from "./ServerConfiguration.js"
export {
  type InspectSlotDirectory,
  inspectSlotDirectory,
  type SlotDirectory
} from "./SlotDirectory.js"
export { authorizeSubmission, type SubmitRefusal } from "./SubmitAuthorization.js"
export { readTokenFile, TOKEN_MAX_BYTES, TOKEN_MIN_BYTES } from "./TokenFile.js"
export { unknownVariableNames, unknownVariables } from "./UnknownVariables.js"
export {
  allVariableDocs,
  ENV_FILE_VARIABLE,
  GLOBAL_VARIABLES,
  UNSUPPORTED_SWITCHES,
  WORKDIR_VARIABLES
} from "./Variables.js"
export {
  slotId,
  type Workdir
} from "./Workdir.js"
export {
  type DirectoryLocation,
  type LocateDirectory,
  locateDirectory,
  runtimeDirectoryProblem,
  workdirOverlapProblem
} from "./WorkdirOverlap.js"
export { WorkdirRegistry } from "./WorkdirRegistry.js"
