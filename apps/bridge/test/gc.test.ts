/**
 * Retention GC (spec v0.7 §2.2, bridge-internals §3): a terminal task past retention disappears
 * whole — record, events, requests, spooled result — at startup, at submission and when a task
 * ends; a non-terminal task and a task a recovery guard points at are kept.
 *
 * SERVERFS_AGENT_TASK_RETENTION_HOURS cannot go below one hour, so the first test drives the
 * bridge's own service graph in this process with a TestClock (real files, real SQLite); the
 * second plants tasks finished hours ago in the database of a stopped bridge and starts it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { TaskStatus } from "@serverfs/domain"
import { TaskStore } from "@serverfs/store"
import { Effect, Either, Option, TestClock } from "effect"
import { BridgeLeases, LiveTaskRegistry, TaskService } from "../src/index.js"
import {
  assertBuilt,
  callError,
  getTask,
  killAll,
  makeSandbox,
  type Sandbox,
  startBridge
} from "./support/daemon.js"
import { inProcessBridge } from "./support/inProcess.js"
import { guardPath } from "./support/mcpSide.js"
import { awaitStatus } from "./support/statusWait.js"
import { plantTask, spoolFile, writeGuard } from "./support/store.js"

let sandbox: Sandbox | undefined

afterEach(async () => {
  await killAll()
  sandbox?.remove()
  sandbox = undefined
})

const HOUR = 3_600_000

describe("retention GC in the task service (TestClock)", () => {
  it.scoped("terminal tasks past retention go whole; running, waiting and guarded ones stay", () => {
    const box = makeSandbox([
      { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
      { slot: 2, alias: "w2", mode: "review", runtimes: "fake" }
    ])
    sandbox = box
    const { layer } = inProcessBridge(
      box.env({
        SERVERFS_AGENT_TASK_RETENTION_HOURS: "1",
        SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "3600000",
        SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: "3600000",
        SERVERFS_AGENT_MAX_ACTIVE_TASKS: "50"
      })
    )
    return Effect.gen(function* () {
      const tasks = yield* TaskService
      const leases = yield* BridgeLeases
      const store = yield* TaskStore

      const submit = (prompt: string, workdir = "w2", profile = "review") =>
        Effect.map(tasks.submit({ runtime: "fake", workdir, path: "", profile, prompt }), (r) => r.task_id)
      /** On the status feed: no clock involved, so the TestClock standing still does not matter. */
      const until = (taskId: string, statuses: ReadonlyArray<TaskStatus>) => awaitStatus(taskId, statuses)
      const gone = (taskId: string) =>
        Effect.map(
          Effect.either(tasks.get(taskId)),
          (r) => Either.isLeft(r) && r.left._tag === "AGENT_TASK_NOT_FOUND"
        )

      const inline = yield* submit("complete:done")
      const spooled = yield* submit("large:300000")
      const approved = yield* submit("approval:x")
      const running = yield* submit("wait:")
      const waiting = yield* submit("question:still open?")
      const guarded = yield* submit("survive:\nwait:", "w1", "workspace-write")
      yield* until(inline, ["succeeded"])
      yield* until(spooled, ["succeeded"])
      const pending = yield* until(approved, ["waiting_for_approval"])
      const requestId = pending.pending_request?.request_id ?? ""
      yield* tasks.respondApproval(approved, requestId, "approve_once", [])
      yield* until(approved, ["succeeded"])
      yield* until(running, ["running"])
      yield* until(waiting, ["waiting_for_question"])
      yield* until(guarded, ["running"])
      yield* tasks.cancel(guarded)
      yield* Effect.flatMap(LiveTaskRegistry, (live) => live.awaitTurn(guarded))
      expect(leases.holds(1)).toBe(false)
      expect(fs.existsSync(guardPath(box.lockDir, 1))).toBe(true)
      expect(fs.existsSync(spoolFile(box.stateDir, spooled))).toBe(true)
      expect(Option.isSome(yield* store.getPendingRequest(requestId))).toBe(true)

      // Not yet past retention: a submission's GC keeps everything.
      yield* TestClock.adjust("59 minutes")
      const early = yield* submit("complete:early")
      yield* until(early, ["succeeded"])
      for (const id of [inline, spooled, approved, running, waiting, guarded])
        expect(yield* gone(id)).toBe(false)

      // Past retention: the next submission collects the finished, unguarded tasks, whole.
      yield* TestClock.adjust("2 minutes")
      const next = yield* submit("complete:next")
      expect(yield* gone(inline)).toBe(true)
      expect(yield* gone(spooled)).toBe(true)
      expect(yield* gone(approved)).toBe(true)
      expect(fs.existsSync(spoolFile(box.stateDir, spooled))).toBe(false)
      expect(Option.isNone(yield* store.getPendingRequest(requestId))).toBe(true)
      const events = yield* Effect.either(tasks.events(inline, 0, 10))
      expect(Either.isLeft(events) && events.left._tag).toBe("AGENT_TASK_NOT_FOUND")
      const read = yield* Effect.either(tasks.readResult(spooled, 0, 10))
      expect(Either.isLeft(read) && read.left._tag).toBe("AGENT_TASK_NOT_FOUND")
      // Kept: the running task, the waiting one, the guarded cancelled one, the recent ones.
      expect((yield* tasks.get(running)).status).toBe("running")
      expect((yield* tasks.get(waiting)).status).toBe("waiting_for_question")
      expect((yield* tasks.get(guarded)).status).toBe("cancelled")
      expect((yield* tasks.get(early)).status).toBe("succeeded")
      yield* until(next, ["succeeded"])

      // Once its guard is gone (an operator cleared it), the guarded task is collected too.
      fs.unlinkSync(guardPath(box.lockDir, 1))
      yield* tasks.collectGarbage
      expect(yield* gone(guarded)).toBe(true)
      expect(yield* gone(running)).toBe(false)

      // A task that ends now is kept for a full retention period from its end.
      yield* tasks.cancel(running)
      yield* TestClock.adjust("59 minutes")
      yield* tasks.collectGarbage
      expect(yield* gone(running)).toBe(false)
      expect(yield* gone(early)).toBe(true)
      // GC also runs when a task's turn ends (here: its cancel's cleanup).
      const last = yield* submit("wait:")
      yield* until(last, ["running"])
      expect(yield* gone(running)).toBe(false)
      yield* TestClock.adjust("2 minutes")
      yield* tasks.cancel(last)
      // The turn's scope closes after the cancel; collection is its last finalizer.
      yield* Effect.flatMap(LiveTaskRegistry, (live) => live.awaitTurn(last))
      expect(yield* gone(running)).toBe(true)
      expect((yield* tasks.get(waiting)).status).toBe("waiting_for_question")
      yield* tasks.cancel(waiting)
    }).pipe(Effect.provide(layer))
  })
})

describe("retention GC at startup (real process)", () => {
  it("tasks finished hours ago are gone after a restart, with their spool files; guarded and unfinished ones are kept", async () => {
    assertBuilt()
    const box = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    sandbox = box
    const env = box.env({ SERVERFS_AGENT_TASK_RETENTION_HOURS: "1" })
    // The daemon creates its state once; then it is stopped and old tasks are planted.
    const first = await startBridge(env)
    expect(await first.stop()).toEqual({ code: 0, signal: null })

    const longAgo = Date.now() - 3 * HOUR
    const oldInline = await plantTask(box.stateDir, {
      status: "succeeded",
      workdirAlias: "w1",
      slot: 1,
      profile: "review",
      atMillis: longAgo
    })
    const oldSpooled = await plantTask(box.stateDir, {
      status: "succeeded",
      workdirAlias: "w1",
      slot: 1,
      profile: "review",
      atMillis: longAgo,
      spooledResult: "é".repeat(200_000)
    })
    const oldGuarded = await plantTask(box.stateDir, {
      status: "cancelled",
      workdirAlias: "w1",
      slot: 1,
      profile: "workspace-write",
      atMillis: longAgo,
      sessionId: "fake-session-old-survivor"
    })
    writeGuard(box.lockDir, 1, {
      task_id: oldGuarded,
      workdir_alias: "w1",
      native_session_id: "fake-session-old-survivor"
    })
    const oldRunning = await plantTask(box.stateDir, {
      status: "running",
      workdirAlias: "w1",
      slot: 1,
      profile: "review",
      atMillis: longAgo,
      sessionId: "fake-session-old-running"
    })
    const recent = await plantTask(box.stateDir, {
      status: "failed",
      workdirAlias: "w1",
      slot: 1,
      profile: "review",
      atMillis: Date.now() - 30 * 60_000
    })
    expect(fs.existsSync(spoolFile(box.stateDir, oldSpooled))).toBe(true)

    const second = await startBridge(env)
    const c = second.client
    for (const id of [oldInline, oldSpooled]) {
      expect((await callError(c, "task.get", { task_id: id })).code).toBe("AGENT_TASK_NOT_FOUND")
      expect((await callError(c, "task.events", { task_id: id })).code).toBe("AGENT_TASK_NOT_FOUND")
    }
    expect(fs.existsSync(spoolFile(box.stateDir, oldSpooled))).toBe(false)
    expect(fs.readdirSync(path.join(box.stateDir, "results"))).toEqual([])
    expect((await getTask(c, oldGuarded)).status).toBe("cancelled")
    expect((await getTask(c, recent)).status).toBe("failed")
    // Unfinished when the bridge started: never collected; reconciled, past its deadline.
    const reconciled = await getTask(c, oldRunning)
    expect(reconciled.status).toBe("interrupted")
    expect(reconciled.error_code).toBe("AGENT_TASK_TIMED_OUT")
    expect(await second.stop()).toEqual({ code: 0, signal: null })
  }, 120_000)
})
