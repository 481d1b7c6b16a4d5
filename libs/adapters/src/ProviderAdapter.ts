import type {
  AgentError,
  ApprovalPayload,
  ApprovalResolution,
  InFlightRecovery,
  ModelCatalog,
  Profile,
  QuestionPayload,
  QuestionResolution,
  RuntimeInfo,
  RuntimeName
} from "@serverfs/domain"
import { Context, Data, type Effect } from "effect"

/**
 * The port every provider runtime implements (spec v0.3 §29, bridge-internals §7/§10). The bridge
 * core owns task state, persistence and the human interactions; an adapter only drives one
 * provider turn and reports through its `TurnSink`. Provider-native ids and protocol objects
 * never leave the adapter except as the opaque ids the sink persists privately.
 *
 * Mapping of the port's operations: start = `run` without `resume`; continue = `run` with the
 * recorded native session; respond to approval / answer question = the value the sink's
 * `requestApproval` / `requestQuestion` effect returns to the adapter; steer, cancel, reconcile
 * and close are methods.
 */

/** What a turn starts from. `cwd` and `workdirRoot` are host paths: adapter-private. */
export interface TurnRequest {
  readonly taskId: string
  readonly cwd: string
  readonly workdirRoot: string
  readonly prompt: string
  readonly profile: Profile
  readonly model: string | null
  /** The native session of the task this one continues (continue_from_task_id), if any. */
  readonly resume: { readonly sessionId: string } | null
  /**
   * Writing files for the turn through the bridge, for a runtime that runs inside it (the
   * scripted runtime's `write:`). Absent: the turn writes nothing this way.
   */
  readonly files?: TurnFiles
}

/** A file operation the bridge refused; `message` is the mutation's `CODE: text` (no host path). */
export class TurnFileRefused extends Data.TaggedError("TurnFileRefused")<{ readonly message: string }> {}

/**
 * The workspace's mutation plane as the bridge offers it to an in-process runtime: the same
 * checks an MCP create_text_file / edit_text_file gets (read-only, path policy, symlinks, hard
 * links, content, size), run as the holder of the task's lease, and refused outright for a
 * review task. Paths are relative to the turn's cwd.
 */
export interface TurnFiles {
  /** Create the file, or replace its whole text. */
  readonly writeText: (path: string, content: string) => Effect.Effect<void, TurnFileRefused>
}

/** A progress event as the adapter reports it through `TurnSink.event`. */
export interface NormalizedEvent {
  readonly type: string
  readonly payload: Record<string, unknown>
}

/** Why a pending interaction ended without an answer. */
export class InteractionEnded extends Data.TaggedError("InteractionEnded")<{
  readonly reason: "stale" | "expired" | "cancelled"
}> {}

/**
 * The adapter's only channel back into the bridge. Every effect here is durable before it
 * returns: an interaction is persisted (and the task shows as waiting) before the human can see
 * it, and its answer comes back only after the compare-and-set resolution committed.
 */
export interface TurnSink {
  /** A normalized event (already free of host paths, or redacted by the sink). */
  readonly event: (eventType: string, payload: Record<string, unknown>) => Effect.Effect<void>
  /** Record the native session / turn ids (private; never shown to clients). */
  readonly nativeIds: (ids: { readonly sessionId?: string; readonly turnId?: string }) => Effect.Effect<void>
  /**
   * Relay an approval to the human and wait for the decision. Interrupting this effect (the
   * provider withdrew its request) marks the ServerFS request stale.
   */
  readonly requestApproval: (payload: ApprovalPayload) => Effect.Effect<ApprovalResolution, InteractionEnded>
  readonly requestQuestion: (payload: QuestionPayload) => Effect.Effect<QuestionResolution, InteractionEnded>
}

export interface TurnOutcome {
  /** The final response text (redacted by the bridge before it is stored). */
  readonly finalText: string
}

/** Provider-aware reconciliation after a restart (bridge-internals §10). */
export type ReconcileStatus = "REATTACHED" | "SESSION_RESUMABLE" | "NOT_RECOVERABLE" | "UNKNOWN"

export interface ReconcileResult {
  readonly status: ReconcileStatus
  /** true: the old provider run may still be acting; false: proven stopped; null: unknown. */
  readonly providerActive: boolean | null
  readonly detail: string
}

export interface RecordedTurn {
  readonly taskId: string
  readonly sessionId: string | null
  readonly turnId: string | null
}

/**
 * A turn a previous bridge process started and the provider may still be running (after a
 * bridge restart, bridge-internals §10 REATTACHED). Host paths are adapter-private, as in
 * `TurnRequest`.
 */
export interface ReattachRequest {
  readonly taskId: string
  readonly sessionId: string
  readonly turnId: string
  readonly cwd: string
  readonly workdirRoot: string
  /** The task waits on a stored interaction: the provider must replay exactly that one. */
  readonly waiting: boolean
}

/** What the adapter proved when it found the turn live, for the bridge to decide on. */
export interface AttachProof {
  /** The relayed requests the provider replayed (each went to the sink before this). */
  readonly replayed: number
}

/**
 * A runtime's model list (bridge-internals §7 "Model discovery"): the normalized catalog a client
 * sees, and the model names a submit may use. The two differ where the provider accepts names
 * its list does not show as ids — Claude Code lists aliases (`opus`) and resolves each to a
 * model id (`claude-opus-…`); both are accepted.
 */
export interface ModelListing {
  readonly catalog: ModelCatalog
  readonly accepted: ReadonlySet<string>
}

/** Discovery did not produce a list (no connection, a refused request, an empty answer). */
export class ModelDiscoveryFailed extends Data.TaggedError("ModelDiscoveryFailed")<{
  readonly reason: string
}> {}

export interface ProviderAdapter {
  readonly name: RuntimeName
  readonly inFlightRecovery: InFlightRecovery
  /** Availability and capabilities, without starting anything. */
  readonly probe: () => Effect.Effect<RuntimeInfo>
  /** Drive one turn to its end. Interruption stops the turn (best effort, bounded by the caller). */
  readonly run: (request: TurnRequest, sink: TurnSink) => Effect.Effect<TurnOutcome, AgentError>
  /** Steer the task's active turn: AGENT_TASK_NOT_ACTIVE without one, AGENT_PROVIDER_ERROR if unsupported. */
  readonly steer: (taskId: string, message: string) => Effect.Effect<void, AgentError>
  /** Ask the provider to stop the task's turn (repeat-safe; failures are the caller's to ignore). */
  readonly cancel: (taskId: string) => Effect.Effect<void, AgentError>
  /**
   * After a bridge restart: follow a turn the previous process started, to its end, as `run`
   * does. Once the provider proved the turn live (its replays already went to the sink), the
   * adapter asks `confirm`; only `true` lets the turn go on — otherwise, or when the turn cannot
   * be proven live, the adapter stops what it attached to and fails. Absent: the runtime never
   * re-attaches (the bridge interrupts the task).
   */
  readonly reattach?: (
    request: ReattachRequest,
    sink: TurnSink,
    confirm: (proof: AttachProof) => Effect.Effect<boolean>
  ) => Effect.Effect<TurnOutcome, AgentError>
  /** After a restart: is the recorded turn still live, resumable, or proven stopped? */
  readonly reconcile: (turn: RecordedTurn) => Effect.Effect<ReconcileResult>
  /**
   * The runtime's models, without starting an inference turn (bridge-internals §8). Absent: the
   * runtime lists none (runtime.models answers `unsupported`). The caller bounds the time and
   * bounds the catalog again (libs/domain Models.ts).
   */
  readonly listModels?: () => Effect.Effect<ModelListing, ModelDiscoveryFailed>
  /**
   * Stop what the adapter still runs (bounded, best effort). An adapter built with its `make`
   * does this when its scope closes; calling it as well is harmless.
   */
  readonly close: () => Effect.Effect<void>
}

/**
 * The port as a service (STYLE rule 1: a port with several implementations is a `Context.Tag`).
 * Each implementation offers `make` (scoped: whatever the adapter acquires is released with the
 * scope) and `layer` / `layerConfig` providing this tag; the bridge, which runs several at once,
 * builds each one's layer in its own scope (RuntimeRegistry).
 */
export class ProviderAdapterTag extends Context.Tag("@serverfs/adapters/ProviderAdapter")<
  ProviderAdapterTag,
  ProviderAdapter
>() {}
