/**
 * Real processes on one database file: a writer SIGKILLed mid-stream leaves a sound database
 * with every committed event readable; resolvers in several processes racing on one request
 * produce exactly one winner (BEGIN IMMEDIATE across processes, not just the in-process lock).
 *
 * The children run the built store (libs/store/dist), like the repository's other integration
 * tests; the test command builds first.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, type Scope } from "effect"
import { TaskStore } from "../src/index.js"
import { insertRunning, interaction, scopedTempState, withStore } from "./helpers.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const child = path.join(here, "fixtures", "storeChild.mjs")
const builtStore = path.join(here, "..", "dist", "index.js")

/** A child on the built store, SIGKILLed by the test's Scope if it is still running at the end. */
const start = (args: ReadonlyArray<string>): Effect.Effect<ChildProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      expect(fs.existsSync(builtStore), "build libs/store first (npx tsc -b libs/store/tsconfig.json)").toBe(
        true
      )
      return spawn(process.execPath, [child, ...args], { stdio: ["pipe", "pipe", "inherit"] })
    }),
    (proc) =>
      Effect.sync(() => {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL")
      })
  )

/** Collects stdout lines; resolves once `done(lines)` holds (or rejects if the child exits first). */
const linesUntil = (
  proc: ChildProcess,
  done: (lines: ReadonlyArray<string>) => boolean
): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const lines: Array<string> = []
    let partial = ""
    const onData = (chunk: Buffer) => {
      partial += chunk.toString("utf8")
      const parts = partial.split("\n")
      partial = parts.pop() ?? ""
      lines.push(...parts)
      if (done(lines)) {
        proc.stdout?.off("data", onData)
        proc.off("exit", onExit)
        resolve(lines)
      }
    }
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`child exited (${String(code ?? signal)}) after ${lines.length} lines`))
    proc.stdout?.on("data", onData)
    proc.on("exit", onExit)
  })

const exited = (proc: ChildProcess): Promise<void> =>
  proc.exitCode !== null || proc.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => proc.once("exit", () => resolve()))

describe("crash safety", () => {
  it.scoped(
    "a writer SIGKILLed mid-stream: the DB opens, integrity_check is ok, every committed event is there",
    () =>
      Effect.flatMap(scopedTempState, (temp) =>
        Effect.gen(function* () {
          const writer = yield* start(["writer", temp.stateDir])
          const lines = yield* Effect.promise(() => linesUntil(writer, (l) => l.length >= 150))
          writer.kill("SIGKILL")
          yield* Effect.promise(() => exited(writer))
          expect(writer.signalCode).toBe("SIGKILL")
          // Lines printed after our threshold but before the kill are committed too; read them all.
          const committed = lines
            .filter((line) => line.startsWith("event "))
            .map((line) => {
              const [, taskId, eventId] = line.split(" ")
              return { taskId: taskId ?? "", eventId: Number(eventId) }
            })
          expect(committed.length).toBeGreaterThanOrEqual(150)
          yield* withStore(
            temp.stateDir,
            Effect.gen(function* () {
              const store = yield* TaskStore
              expect(yield* store.integrityCheck()).toEqual(["ok"])
              const byTask = new Map<string, Array<number>>()
              for (const { taskId, eventId } of committed)
                byTask.set(taskId, [...(byTask.get(taskId) ?? []), eventId])
              for (const [taskId, ids] of byTask) {
                const events = yield* store.readEvents(taskId, 0, 500)
                const stored = events.map((e) => e.event_id)
                // Every acknowledged id is present (the very last task may hold one more event that
                // committed after the final line left the pipe).
                for (const id of ids) expect(stored).toContain(id)
                const task = Option.getOrThrow(yield* store.getTask(taskId))
                expect(task.event_count).toBe(stored.length)
                expect(events.every((e) => e.correlation_id === task.correlation_id)).toBe(true)
              }
              // The store still takes writes after recovery.
              yield* insertRunning()
            })
          )
        })
      )
  )
})

describe("across processes", () => {
  it.scoped("a mutation waits for another process's write lock (busy_timeout) instead of failing", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      withStore(
        temp.stateDir,
        Effect.gen(function* () {
          const store = yield* TaskStore
          const locker = yield* start(["locker", temp.stateDir, "700"])
          yield* Effect.promise(() => linesUntil(locker, (l) => l.includes("locked")))
          // The lock is held by the other process right now; BEGIN IMMEDIATE must wait for it.
          const taskId = yield* insertRunning()
          expect(Option.map(yield* store.getTask(taskId), (t) => t.status)).toEqual(Option.some("running"))
          yield* Effect.promise(() => exited(locker))
          expect(locker.exitCode).toBe(0)
        })
      )
    )
  )

  it.scoped("4 processes × 5 concurrent resolvers on one request: exactly one wins", () =>
    Effect.flatMap(scopedTempState, (temp) =>
      Effect.gen(function* () {
        const { taskId, requestId } = yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const id = yield* insertRunning()
            const { request } = yield* store.createPendingRequest(
              id,
              "approval",
              { title: "race" },
              "2100-01-01T00:00:00Z",
              interaction
            )
            return { taskId: id, requestId: request.request_id }
          })
        )
        // The TestClock of it.effect is not involved: the children use the real clock and the
        // request expires in 2100.
        const procs = yield* Effect.all(
          Array.from({ length: 4 }, () => start(["resolver", temp.stateDir, taskId, requestId, "5"]))
        )
        yield* Effect.promise(() => Promise.all(procs.map((p) => linesUntil(p, (l) => l.includes("ready")))))
        const results = procs.map((p) => linesUntil(p, (l) => l.filter((x) => x.startsWith("{")).length >= 5))
        for (const p of procs) p.stdin?.end("go\n")
        const outputs = yield* Effect.promise(() => Promise.all(results))
        const outcomes = outputs.flatMap((lines) =>
          lines.filter((x) => x.startsWith("{")).map((x) => JSON.parse(x))
        )
        expect(outcomes).toHaveLength(20)
        expect(outcomes.filter((o) => o.ok)).toHaveLength(1)
        expect(outcomes.filter((o) => !o.ok).map((o) => o.code)).toEqual(
          Array.from({ length: 19 }, () => "REQUEST_ALREADY_RESOLVED")
        )
        yield* Effect.promise(() => Promise.all(procs.map(exited)))
        yield* withStore(
          temp.stateDir,
          Effect.gen(function* () {
            const store = yield* TaskStore
            const task = Option.getOrThrow(yield* store.getTask(taskId))
            expect([task.status, task.pending_request_id]).toEqual(["running", null])
            const request = Option.getOrThrow(yield* store.getPendingRequest(requestId))
            expect(request.status).toBe("resolved")
          })
        )
      })
    )
  )
})
