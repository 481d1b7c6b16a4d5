import { Effect, Option, Schedule } from "effect"
import type { ReconcileResult, RecordedTurn } from "../ProviderAdapter.js"
import { groupExists, killGroup, parseProcessTurnId, startTicks } from "./ClaudeProcess.js"
import type { ClaudeTurns } from "./ClaudeTurn.js"

/**
 * bridge-internals §10 for Claude, made provable where it can be: a turn of this process is
 * live or was seen to stop; a turn of an earlier bridge process is judged by its CLI's process
 * group (recorded as the native turn id). A group that still runs belongs to a CLI whose
 * controlling bridge is gone — nobody can answer or steer it any more — so it is stopped before
 * the answer is given. Without that record the state is unknown.
 */
const EXIT = "3 seconds"

/**
 * Is the group gone within `EXIT`? A group of an earlier process has no exit event to wait on
 * (it is not our child): its existence is checked on a short schedule.
 */
const groupGoneWithin = (pgid: number) =>
  Effect.sync(() => groupExists(pgid) === false).pipe(
    Effect.repeat({ schedule: Schedule.spaced("25 millis"), until: (gone) => gone }),
    Effect.timeout(EXIT),
    Effect.option,
    Effect.map(Option.getOrElse(() => false))
  )

export const makeClaudeReconcile =
  (turns: ClaudeTurns) =>
  (turn: RecordedTurn): Effect.Effect<ReconcileResult> =>
    Effect.gen(function* () {
      const resumable = turn.sessionId === null ? "NOT_RECOVERABLE" : "SESSION_RESUMABLE"
      if (turns.active.has(turn.taskId)) {
        return {
          status: "UNKNOWN",
          providerActive: true,
          detail: "the turn is running in this bridge process"
        }
      }
      if (turns.stopped.has(turn.taskId)) {
        return {
          status: resumable,
          providerActive: false,
          detail: "the turn's CLI exited in this bridge process"
        }
      }
      const recorded = parseProcessTurnId(turn.turnId)
      if (recorded === undefined) {
        return { status: resumable, providerActive: null, detail: "no record of the turn's CLI process" }
      }
      const exists = groupExists(recorded.pid)
      if (exists === true) {
        if (recorded.ticks === "?") {
          return {
            status: "UNKNOWN",
            providerActive: null,
            detail: "the CLI's process group cannot be identified"
          }
        }
        const leader = startTicks(recorded.pid)
        // A live leader with another start time is a recycled pid: not ours to stop.
        if (leader !== undefined && leader !== recorded.ticks) {
          return { status: "UNKNOWN", providerActive: null, detail: "the CLI's process id was reused" }
        }
        killGroup(recorded.pid, "SIGKILL")
        if (!(yield* groupGoneWithin(recorded.pid))) {
          return {
            status: "UNKNOWN",
            providerActive: null,
            detail: "the previous CLI's process group did not stop"
          }
        }
        return { status: resumable, providerActive: false, detail: "the previous bridge's CLI was stopped" }
      }
      if (exists === false) {
        return { status: resumable, providerActive: false, detail: "the turn's CLI process group is gone" }
      }
      return { status: "UNKNOWN", providerActive: null, detail: "the CLI's process group cannot be checked" }
    })
