/**
 * The scheduling-failure path (bridge-internals §4: BRIDGE_SCHEDULING_FAILED is stored on the
 * task): a workspace-write task is inserted, then its recovery guard cannot be published. The
 * submission answers the guard's error; the task is not left `queued` — it is `interrupted` with
 * `error_code` BRIDGE_SCHEDULING_FAILED (a queued task cannot fail, per the transition table), the
 * lease is released, no guard is left, and the workdir takes the next writer at once.
 *
 * Root ignores directory modes, so the guard failure is injected by wrapping the real leases.
 */
import * as fs from "node:fs"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { LockPathUnsafe } from "@serverfs/domain"
import { TaskStore } from "@serverfs/store"
import { Effect, Either, Option } from "effect"
import { BridgeLeases, TaskService } from "../src/index.js"
import { makeSandbox, type Sandbox, TERMINAL } from "./support/daemon.js"
import { inProcessBridge } from "./support/inProcess.js"
import { guardPath } from "./support/mcpSide.js"
import { awaitStatus } from "./support/statusWait.js"

let sandbox: Sandbox | undefined

afterEach(() => {
  sandbox?.remove()
  sandbox = undefined
})

describe("a recovery guard that cannot be published", () => {
  it.scoped(
    "submit → LOCK_PATH_UNSAFE; the task is interrupted with BRIDGE_SCHEDULING_FAILED, nothing held",
    () => {
      const box = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
      sandbox = box
      let failGuard = true
      const { layer, auditLines } = inProcessBridge(
        box.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "1" }),
        undefined,
        (real) =>
          BridgeLeases.make({
            ...real,
            publishGuard: (guard) =>
              failGuard
                ? Effect.fail(new LockPathUnsafe({ message: "lock directory guard cannot be written" }))
                : real.publishGuard(guard)
          })
      )
      return Effect.gen(function* () {
        const tasks = yield* TaskService
        const leases = yield* BridgeLeases
        const store = yield* TaskStore
        const submit = (prompt: string, key: string) =>
          tasks.submit({
            runtime: "fake",
            workdir: "w1",
            path: "",
            profile: "workspace-write",
            prompt,
            idempotency_key: key
          })

        const refused = yield* Effect.either(submit("complete:never", "first"))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("LOCK_PATH_UNSAFE")

        const stored = yield* store.findByIdempotencyKey("first")
        expect(Option.isSome(stored)).toBe(true)
        const taskId = Option.getOrThrow(stored).task_id
        const view = yield* tasks.get(taskId)
        expect(view).toMatchObject({ status: "interrupted", error_code: "BRIDGE_SCHEDULING_FAILED" })
        const page = yield* tasks.events(taskId, 0, 100)
        expect(page.events.map((e) => e.event_type)).toContain("task.interrupted")
        expect(page.events.find((e) => e.event_type === "task.interrupted")?.payload).toMatchObject({
          error_code: "BRIDGE_SCHEDULING_FAILED"
        })
        expect(leases.holds(1)).toBe(false)
        expect(fs.existsSync(guardPath(box.lockDir, 1))).toBe(false)
        expect(
          auditLines.some(
            (l) =>
              l.includes('"task_transition"') &&
              l.includes(taskId) &&
              l.includes('"error_code":"BRIDGE_SCHEDULING_FAILED"')
          )
        ).toBe(true)

        // Not counted as active (the limit is 1) and no lease left behind: the next writer runs.
        failGuard = false
        const next = yield* submit("complete:next", "second")
        yield* awaitStatus(next.task_id, TERMINAL)
        expect((yield* tasks.get(next.task_id)).status).toBe("succeeded")
      }).pipe(Effect.provide(layer))
    }
  )
})
