export {
  type ClaudeAdapterOptions,
  makeClaudeAdapter
} from "./claude/ClaudeAdapter.js"
export type { ClaudeApprovalResolution } from "./claude/ClaudeMapping.js"
export {
  type CodexAdapterOptions,
  makeCodexAdapter
} from "./codex/CodexAdapter.js"
export { CODEX_PROTOCOL_VERSION } from "./codex/protocol/Version.js"
export { makeScriptedAdapter } from "./fake/ScriptedAdapter.js"
export {
  largeText,
  parseScript,
  type ScriptedCommand
} from "./fake/ScriptedCommand.js"
export {
  InteractionEnded,
  type NormalizedEvent,
  type ProviderAdapter,
  type ReconcileResult,
  type ReconcileStatus,
  type RecordedTurn,
  TurnFileRefused,
  type TurnFiles,
  type TurnOutcome,
  type TurnRequest,
  type TurnSink
} from "./ProviderAdapter.js"
