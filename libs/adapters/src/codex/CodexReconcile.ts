import { Effect } from "effect"
import type { ReconcileResult, RecordedTurn } from "../ProviderAdapter.js"
import type { CodexCli } from "./CodexCli.js"
import type { CodexTurns } from "./CodexTurns.js"

/**
 * bridge-internals §10 for Codex: a turn this process still drives is live (REATTACHED when it
 * is a previous process's turn re-attached after a restart, CodexRestartAttach); a task whose turn
 * was never sent is proven stopped; otherwise the recorded thread is read from Codex — active
 * means the old turn may still act, anything else that the session can be resumed.
 */
export const makeCodexReconcile =
  (cli: CodexCli, turns: CodexTurns) =>
  (recorded: RecordedTurn): Effect.Effect<ReconcileResult> =>
    Effect.suspend((): Effect.Effect<ReconcileResult> => {
      const live = turns.active.get(recorded.taskId)
      if (live !== undefined && !live.done) {
        // A turn of the previous bridge process this one proved live and follows again.
        if (live.reattached) {
          return Effect.succeed({
            status: "REATTACHED",
            providerActive: true,
            detail: "the Codex turn survived the restart and is followed again"
          })
        }
        return Effect.succeed({
          status: "UNKNOWN",
          providerActive: true,
          detail: "the turn is still driven by this process"
        })
      }
      const sessionId = recorded.sessionId
      if (sessionId === null) {
        const neverSent = turns.runs.get(recorded.taskId) === "no-turn"
        return Effect.succeed({
          status: "NOT_RECOVERABLE",
          providerActive: neverSent ? false : null,
          detail: neverSent
            ? "no Codex thread was started and no turn was sent"
            : "no Codex thread was recorded for the task"
        })
      }
      return Effect.scoped(
        Effect.flatMap(cli.connect, (connection) =>
          connection.request("thread/read", { threadId: sessionId, includeTurns: true })
        )
      ).pipe(
        Effect.map(
          (read): ReconcileResult =>
            read.thread.status.type === "active"
              ? { status: "UNKNOWN", providerActive: true, detail: "the Codex thread is still active" }
              : {
                  status: "SESSION_RESUMABLE",
                  providerActive: false,
                  detail: `the Codex thread is ${read.thread.status.type}`
                }
        ),
        // Whatever kept the thread from being read (no daemon, a refused request), the state is
        // unknown: the bridge keeps the guard.
        Effect.catchAll(() =>
          Effect.succeed<ReconcileResult>({
            status: "UNKNOWN",
            providerActive: null,
            detail: "the Codex thread could not be read"
          })
        )
      )
    })
