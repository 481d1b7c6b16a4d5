export * from "./AgentSettings.js"
export * from "./BridgeSettings.js"
export * from "./Configuration.js"
export * from "./ConfigurationError.js"
export * from "./DenyPolicy.js"
export * from "./EnvFile.js"
export * from "./Fnmatch.js"
export * from "./GlobalSettings.js"
export * from "./Parsers.js"
export * from "./PathGlob.js"
export {
  EXIT_CONFIGURATION,
  EXIT_FAILURE,
  EXIT_OK,
  exitTeardown,
  type ProgramExit,
  withExitCode
} from "./ProgramExit.js"
export * from "./RequestPath.js"
export * from "./ReservedNames.js"
export * from "./ResolvedPath.js"
export * from "./ServerConfiguration.js"
export * from "./SlotDirectory.js"
export * from "./UnknownVariables.js"
export * from "./Variables.js"
export * from "./Workdir.js"
export * from "./WorkdirOverlap.js"
export * from "./WorkdirRegistry.js"
