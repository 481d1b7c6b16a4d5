/**
 * The task's scope (issue 11): whatever ends a task — a provider failure, an interruption of
 * the submitting fiber or of the turn at any await point — its writer lease is released the same
 * way and no recovery guard is left; and what the bridge stores from a provider is redacted
 * (a provider failure's message included: bridge-internals §6 "Redaction", spec v0.3 §16).
 * In process, with test-only adapters registered as the runtime registry's leaf.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { AgentProviderError, type RuntimeName } from "@serverfs/domain"
import { TaskStore } from "@serverfs/store"
import { Effect, Fiber } from "effect"
import { BridgeLeases, LiveTaskRegistry, TaskService } from "../src/index.js"
import { makeSandbox, type Sandbox } from "./support/daemon.js"
import { inProcessBridge } from "./support/inProcess.js"
import { flockFree, guardPath } from "./support/mcpSide.js"
import { awaitStatus } from "./support/statusWait.js"
import {
  approvalAdapter,
  failingAdapter,
  type GatePoint,
  type Gates,
  gatedAdapter,
  makeGates
} from "./support/stubAdapters.js"

let sandbox: Sandbox | undefined

afterEach(() => {
  sandbox?.remove()
  sandbox = undefined
})

const box = () => {
  sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake,codex,claude" }])
  return sandbox
}

describe("a provider failure's message", () => {
  for (const runtime of ["fake", "codex", "claude"] satisfies ReadonlyArray<RuntimeName>) {
    it.scoped(
      `${runtime}: the workdir, a home directory and a temp path are redacted where stored and returned`,
      () => {
        const sb = box()
        const home = os.homedir()
        const temp = `${os.tmpdir()}/provider-1234/socket`
        const { layer } = inProcessBridge(sb.env(), [
          failingAdapter(
            runtime,
            (root) =>
              `could not write ${root}/src/a.ts: see ${home}/.config/${runtime}/log and ${temp} (exit 1)`
          )
        ])
        return Effect.gen(function* () {
          const tasks = yield* TaskService
          const store = yield* TaskStore
          const { task_id } = yield* tasks.submit({
            runtime,
            workdir: "w1",
            path: "",
            profile: "workspace-write",
            prompt: "fail"
          })
          const view = yield* awaitStatus(task_id, ["failed"])
          const stored = (yield* store.getTask(task_id)).pipe((o) =>
            o._tag === "Some" ? o.value : undefined
          )
          for (const message of [view.error_message, stored?.error_message]) {
            expect(message).toBe("could not write <workdir>/src/a.ts: see <path> and <path> (exit 1)")
            for (const leak of [sb.workdir("w1"), home, os.tmpdir()]) expect(message).not.toContain(leak)
          }
          expect(view.error_code).toBe("AGENT_PROVIDER_ERROR")
        }).pipe(Effect.provide(layer))
      }
    )
  }
})

describe("a provider's refusal to steer", () => {
  it.scoped("is returned with the workdir and other host paths redacted", () => {
    const sb = box()
    return Effect.gen(function* () {
      const gates = yield* makeGates(["native-ids"])
      const root = sb.workdir("w1")
      const { layer } = inProcessBridge(sb.env(), [
        {
          ...gatedAdapter(gates),
          steer: () =>
            Effect.fail(
              new AgentProviderError({ message: `no turn in ${root}/src; see ${os.homedir()}/x.log` })
            )
        }
      ])
      yield* Effect.gen(function* () {
        const tasks = yield* TaskService
        const { task_id } = yield* submitWrite("steer")
        yield* gates.reached("native-ids")
        const refused = yield* Effect.flip(tasks.sendMessage(task_id, "hello"))
        expect(refused._tag).toBe("AGENT_PROVIDER_ERROR")
        expect(refused.message).toBe("no turn in <workdir>/src; see <path>")
        yield* gates.open("native-ids")
        yield* awaitStatus(task_id, ["succeeded"])
      }).pipe(Effect.provide(layer))
    })
  })
})

/** The real leases, with the guard's read (after the flock) and publication (after the insert) gated. */
const gatedLeases = (gates: Gates) => (real: BridgeLeases) =>
  BridgeLeases.make({
    ...real,
    readGuard: (slot) => Effect.zipRight(gates.wait("read-guard"), real.readGuard(slot)),
    publishGuard: (guard) => Effect.zipRight(gates.wait("publish-guard"), real.publishGuard(guard))
  })

const submitWrite = (key: string) =>
  Effect.flatMap(TaskService, (tasks) =>
    tasks.submit({
      runtime: "fake",
      workdir: "w1",
      path: "",
      profile: "workspace-write",
      prompt: "go",
      idempotency_key: key
    })
  )

/** Nothing held: the lease free (to another process's flock too), no guard, no task left live. */
const expectNothingHeld = (sb: Sandbox) =>
  Effect.gen(function* () {
    const leases = yield* BridgeLeases
    const store = yield* TaskStore
    expect(leases.holds(1)).toBe(false)
    expect(flockFree(sb.lockDir, 1)).toBe(true)
    expect(fs.existsSync(guardPath(sb.lockDir, 1))).toBe(false)
    expect(yield* store.listNonTerminal()).toEqual([])
  })

describe("a lease cannot leak", () => {
  const submissionPoints: ReadonlyArray<GatePoint> = ["probe", "read-guard", "publish-guard"]
  for (const point of submissionPoints) {
    it.scoped(`the submitting fiber interrupted at ${point}: nothing held afterwards`, () => {
      const sb = box()
      return Effect.gen(function* () {
        const gates = yield* makeGates([point])
        const { layer } = inProcessBridge(sb.env(), [gatedAdapter(gates)], gatedLeases(gates))
        yield* Effect.gen(function* () {
          const submitting = yield* Effect.fork(submitWrite(point))
          yield* gates.reached(point)
          // An acquisition in progress (the guard's publication) completes before the
          // interruption lands: the gate is opened while the interruption waits.
          const interrupting = yield* Effect.fork(Fiber.interrupt(submitting))
          yield* gates.open(point)
          yield* Fiber.join(interrupting)
          yield* expectNothingHeld(sb)
          // And the workdir takes the next writer at once.
          const next = yield* submitWrite(`${point}-next`)
          expect((yield* awaitStatus(next.task_id, ["succeeded"])).status).toBe("succeeded")
          yield* Effect.flatMap(LiveTaskRegistry, (live) => live.awaitTurn(next.task_id))
          yield* expectNothingHeld(sb)
        }).pipe(Effect.provide(layer))
      })
    })
  }

  const turnPoints: ReadonlyArray<GatePoint> = ["run", "native-ids", "done"]
  for (const point of turnPoints) {
    it.scoped(`the turn fiber interrupted at ${point}: nothing held afterwards`, () => {
      const sb = box()
      return Effect.gen(function* () {
        const gates = yield* makeGates([point])
        const { layer } = inProcessBridge(sb.env(), [gatedAdapter(gates)])
        yield* Effect.gen(function* () {
          const { task_id } = yield* submitWrite(point)
          yield* gates.reached(point)
          expect(flockFree(sb.lockDir, 1)).toBe(false)
          const live = yield* LiveTaskRegistry
          yield* live.interruptTurn(task_id)
          const view = yield* awaitStatus(task_id, ["interrupted"])
          expect(view.error_code).toBe("BRIDGE_SHUTDOWN")
          yield* live.awaitTurn(task_id)
          yield* expectNothingHeld(sb)
        }).pipe(Effect.provide(layer))
      })
    })
  }

  it.scoped(
    "the turn fiber interrupted while its approval waits: the request is staled, nothing held",
    () => {
      const sb = box()
      const { layer } = inProcessBridge(sb.env(), [approvalAdapter()])
      return Effect.gen(function* () {
        const { task_id } = yield* submitWrite("approval")
        const waiting = yield* awaitStatus(task_id, ["waiting_for_approval"])
        expect(waiting.pending_request?.status).toBe("pending")
        const live = yield* LiveTaskRegistry
        yield* live.interruptTurn(task_id)
        const view = yield* awaitStatus(task_id, ["interrupted"])
        expect(view.pending_request_id).toBeNull()
        yield* live.awaitTurn(task_id)
        yield* expectNothingHeld(sb)
      }).pipe(Effect.provide(layer))
    }
  )
})
