import { Deferred, Effect } from "effect"
import type { CodexConnection } from "./CodexTransport.js"
import type { Turn } from "./protocol/generated/v2/index.js"

/**
 * The Codex turns this adapter drives, by task id, and what it remembers of past runs (for a
 * reconcile without a recorded thread). Owned by one adapter instance; nothing here is shared
 * between instances.
 */
export interface ActiveTurn {
  threadId: string | null
  turnId: string | null
  /** The connection the turn is followed on (replaced on a reconnect). */
  connection: CodexConnection | null
  /** ServerFS asked the turn to stop (cancel, cancel_task, an ended interaction). */
  cancelRequested: boolean
  /** turn/completed was seen. */
  done: boolean
  /** The daemon lost the turn: leave the pending ServerFS request for the bridge to settle. */
  lost: boolean
  /** A turn of a previous bridge process, proven live and followed again here (REATTACHED). */
  reattached: boolean
  /**
   * Done when the bridge's `cancel` reached this turn. The bridge commits the task's terminal
   * state before it tells the provider to stop (cancel, deadline, expired interaction), so after
   * this signal an "interrupted" turn can be reported without racing that decision.
   */
  readonly stopSignalled: Deferred.Deferred<void>
}

const REMEMBERED_RUNS = 10_000

export interface CodexTurns {
  readonly active: Map<string, ActiveTurn>
  /** Per task run in this process: did its turn/start go out? */
  readonly runs: Map<string, "no-turn" | "turn-sent">
  readonly remember: (taskId: string, state: "no-turn" | "turn-sent") => void
  /** A new turn for `taskId`, registered as active. */
  readonly begin: (taskId: string) => Effect.Effect<ActiveTurn>
  /** The turn ended: no longer active (unless a newer run of the task replaced it). */
  readonly end: (taskId: string, turn: ActiveTurn) => Effect.Effect<void>
}

export const makeCodexTurns = (): CodexTurns => {
  const active = new Map<string, ActiveTurn>()
  const runs = new Map<string, "no-turn" | "turn-sent">()
  // Bounded: an insertion-ordered map whose oldest entry goes first.
  const remember = (taskId: string, state: "no-turn" | "turn-sent") => {
    runs.delete(taskId)
    runs.set(taskId, state)
    if (runs.size > REMEMBERED_RUNS) {
      const oldest = runs.keys().next()
      if (oldest.done !== true) runs.delete(oldest.value)
    }
  }
  const begin = (taskId: string) =>
    Effect.map(Deferred.make<void>(), (stopSignalled) => {
      const turn: ActiveTurn = {
        threadId: null,
        turnId: null,
        connection: null,
        cancelRequested: false,
        done: false,
        lost: false,
        reattached: false,
        stopSignalled
      }
      active.set(taskId, turn)
      remember(taskId, "no-turn")
      return turn
    })
  const end = (taskId: string, turn: ActiveTurn) =>
    Effect.sync(() => {
      if (active.get(taskId) === turn) active.delete(taskId)
    })
  return { active, runs, remember, begin, end }
}

/** What one incoming message means for the turn's loop. */
export type Signal =
  | { readonly _tag: "continue" }
  | { readonly _tag: "completed"; readonly turn: Turn }
  | { readonly _tag: "closed"; readonly reason: string }
  /** A notification the turn acts on did not decode: the turn cannot be followed reliably. */
  | { readonly _tag: "malformed"; readonly method: string }

export const CONTINUE: Signal = { _tag: "continue" }
