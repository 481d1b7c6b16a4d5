export {
  ClaudeAdapter,
  type ClaudeAdapterOptions,
  makeClaudeAdapter
} from "./claude/ClaudeAdapter.js"
export type { ClaudeApprovalResolution } from "./claude/ClaudeMapping.js"
export {
  CodexAdapter,
  type CodexAdapterOptions,
  makeCodexAdapter
} from "./codex/CodexAdapter.js"
export { CODEX_PROTOCOL_VERSION } from "./codex/protocol/Version.js"
export {
  makeScriptedAdapter,
  ScriptedAdapter
} from "./fake/ScriptedAdapter.js"
export {
  largeText,
  parseScript,
  type ScriptedCommand
} from "./fake/ScriptedCommand.js"
export { SCRIPTED_MODELS } from "./fake/ScriptedModels.js"
export type { AttachProof, ReattachRequest } from "./ProviderAdapter.js"
export {
  InteractionEnded,
  ModelDiscoveryFailed,
  type ModelListing,
  type NormalizedEvent,
  type ProviderAdapter,
  ProviderAdapterTag,
  type ReconcileResult,
  type ReconcileStatus,
  type RecordedTurn,
  TurnFileRefused,
  type TurnFiles,
  type TurnOutcome,
  type TurnRequest,
  type TurnSink
} from "./ProviderAdapter.js"
