export {
  type AgentEvent,
  type AgentStack,
  type AgentStackOptions,
  agentStackEnv,
  type BridgeProcess,
  readAllEvents,
  scopedAgentStack,
  scopedBridgeProcess,
  startAgentStack,
  startBridgeProcess,
  type ToolCallResult,
  waitForStatus
} from "./AgentStack.js"
export {
  type BridgeResponse,
  bridgeCall,
  type RawExchange,
  type RawExchangeOptions,
  rawExchange,
  requestLine
} from "./BridgeSocket.js"
export {
  bundledClaudeBinary,
  type ClaudeSandbox,
  fileBytes,
  makeClaudeSandbox
} from "./ClaudeTestEnv.js"
export {
  cleanupCodexDaemon,
  controlSocket,
  killCodexDaemon,
  processesMentioning,
  startCodexDaemon
} from "./CodexDaemon.js"
export {
  type CodexHome,
  type CodexHomeOptions,
  codexBin,
  makeCodexHome
} from "./CodexHome.js"
export { type EventuallyOptions, eventually, eventuallyAsync, NotReached } from "./Eventually.js"
export {
  askReply,
  bashReply,
  type ClaudeAskedQuestion,
  type FakeMessagesServer,
  httpErrorReply,
  lastToolResults,
  longCommandReply,
  type MessagesBody,
  type MessagesReply,
  type MessagesRequest,
  type MessagesScript,
  messageTexts,
  startFakeMessagesServer,
  textReply,
  toolUseReply
} from "./FakeMessagesServer.js"
export {
  type FakeQuestion,
  type FakeReply,
  type FakeResponsesServer,
  type RecordedRequest,
  type ScriptedReply,
  startFakeResponsesServer,
  type ToolOutput
} from "./FakeResponsesServer.js"
export {
  type McpHttp,
  type McpHttpOptions,
  scopedMcpHttp,
  startMcpHttp
} from "./McpHttp.js"
export {
  type McpProcess,
  type McpTestTransport,
  mcpTestTransport,
  scopedMcp,
  startMcp
} from "./McpProcess.js"
export { environmentsWith, serverFsNames } from "./ProcEnviron.js"
export { type ReadableCheckout, readableCheckout } from "./ReadableCheckout.js"
export {
  bridgeMain,
  cliMain,
  mcpMain,
  repoRoot
} from "./RepoPaths.js"
export { runningAsRoot, skipWithoutRoot } from "./RootOnly.js"
export {
  makeTempTree,
  SharedTempTree,
  scopedTempTree,
  type TempTree
} from "./TempTree.js"
export {
  errorCodeOf,
  textOf
} from "./ToolText.js"
