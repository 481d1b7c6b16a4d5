/**
 * runtime.models and submit's model check in the bridge's own service graph (bridge-internals
 * §8), with stub runtimes that misbehave on purpose: one that lists 100,000 models with huge
 * strings, one whose listing never answers, one that fails, one whose probe says unavailable.
 * The time bound runs on the TestClock.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { ModelListing, ProviderAdapter } from "@serverfs/adapters"
import { ModelDiscoveryFailed } from "@serverfs/adapters"
import {
  MAX_MODEL_DESCRIPTION_BYTES,
  MAX_MODEL_LIST_ITEMS,
  MAX_MODEL_NAME_BYTES,
  MAX_MODELS,
  type RuntimeInfo,
  type RuntimeName
} from "@serverfs/domain"
import { Effect, Either, Fiber, TestClock } from "effect"
import { TaskService } from "../src/index.js"
import { makeSandbox, type Sandbox, TERMINAL } from "./support/daemon.js"
import { inProcessBridge } from "./support/inProcess.js"
import { awaitStatus } from "./support/statusWait.js"

let sandbox: Sandbox | undefined

afterEach(() => {
  sandbox?.remove()
  sandbox = undefined
})

interface Stub {
  readonly adapter: ProviderAdapter
  readonly listings: () => number
  readonly setVersion: (v: string) => void
}

const stub = (
  name: RuntimeName,
  listModels: (() => Effect.Effect<ModelListing, ModelDiscoveryFailed>) | undefined,
  available = true
): Stub => {
  let listings = 0
  let version = "stub-1"
  const probe = (): Effect.Effect<RuntimeInfo> =>
    Effect.sync(() => (available ? { name, available: true, version } : { name, available: false }))
  return {
    adapter: {
      name,
      inFlightRecovery: "none",
      probe,
      run: () => Effect.succeed({ finalText: "done" }),
      steer: () => Effect.void,
      cancel: () => Effect.void,
      reconcile: () => Effect.succeed({ status: "NOT_RECOVERABLE", providerActive: false, detail: "stub" }),
      close: () => Effect.void,
      ...(listModels === undefined
        ? {}
        : {
            listModels: () =>
              Effect.suspend(() => {
                listings++
                return listModels()
              })
          })
    },
    listings: () => listings,
    setVersion: (v) => {
      version = v
    }
  }
}

const huge = "é".repeat(1_000_000)
// Shared by every entry: the point is what the bridge returns, not what the test allocates.
const manyHuge = Array.from({ length: 10_000 }, () => huge)
const manyShort = Array.from({ length: 10_000 }, () => "high")
const hostileListing: ModelListing = {
  catalog: {
    status: "ok",
    scope: "runtime_catalog",
    source: huge,
    detail: huge,
    models: Array.from({ length: 100_000 }, (_, i) => ({
      id: `m${i}${i === 0 ? huge : ""}`,
      display_name: huge,
      description: huge,
      enabled: true,
      is_default: i === 0,
      hidden: false,
      input_modalities: manyHuge,
      reasoning: { supported: manyShort, default: huge },
      service_tiers: manyShort
    }))
  },
  accepted: new Set(Array.from({ length: 100_000 }, (_, i) => `m${i}`))
}

const box = () => {
  sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake,codex,claude" }])
  return sandbox
}

describe("runtime.models", () => {
  it.scoped("a hostile runtime's 100,000 models and megabyte strings come back bounded", () => {
    const hostile = stub("codex", () => Effect.succeed(hostileListing))
    const { layer } = inProcessBridge(box().env({}), [hostile.adapter])
    return Effect.gen(function* () {
      const tasks = yield* TaskService
      const result = yield* tasks.models({ runtime: "codex" })
      expect(result.status).toBe("ok")
      expect(result.models.length).toBe(MAX_MODELS)
      const bytes = (s: string) => Buffer.byteLength(s, "utf8")
      for (const m of result.models) {
        expect(bytes(m.id)).toBeLessThanOrEqual(MAX_MODEL_NAME_BYTES)
        expect(bytes(m.display_name)).toBeLessThanOrEqual(MAX_MODEL_NAME_BYTES)
        expect(bytes(m.description ?? "")).toBeLessThanOrEqual(MAX_MODEL_DESCRIPTION_BYTES)
        expect(m.input_modalities?.length).toBeLessThanOrEqual(MAX_MODEL_LIST_ITEMS)
        expect(m.reasoning?.supported.length).toBeLessThanOrEqual(MAX_MODEL_LIST_ITEMS)
        expect(m.service_tiers?.length).toBeLessThanOrEqual(MAX_MODEL_LIST_ITEMS)
        // Cut on a character boundary: no replacement character.
        expect(m.display_name).not.toContain("\uFFFD")
      }
      // The whole answer stays small: 64 bounded entries.
      expect(bytes(JSON.stringify(result))).toBeLessThan(MAX_MODELS * 8 * 1024)
    }).pipe(Effect.provide(layer))
  })

  it.scoped("unknown, unavailable, failing, hanging and unsupported runtimes", () => {
    const down = stub("claude", () => Effect.succeed(hostileListing), false)
    const failing = stub("codex", () => Effect.fail(new ModelDiscoveryFailed({ reason: "no daemon" })))
    const hanging = stub("fake", () => Effect.never)
    const { layer } = inProcessBridge(box().env({}), [down.adapter, failing.adapter, hanging.adapter])
    return Effect.gen(function* () {
      const tasks = yield* TaskService
      const unknown = yield* Effect.either(tasks.models({ runtime: "qoder" }))
      expect(Either.isLeft(unknown) && unknown.left._tag).toBe("AGENT_RUNTIME_UNAVAILABLE")
      expect(yield* tasks.models({ runtime: "claude" })).toEqual({
        runtime: "claude",
        status: "unavailable",
        scope: "none",
        source: "claude",
        models: [],
        detail: "runtime is unavailable"
      })
      expect(down.listings()).toBe(0)
      expect(yield* tasks.models({ runtime: "codex" })).toMatchObject({
        status: "unavailable",
        scope: "none",
        models: [],
        detail: "model discovery failed"
      })
      // A listing that never answers is given up after the bound (20 s), well inside the RPC's 30 s.
      const fiber = yield* Effect.fork(tasks.models({ runtime: "fake" }))
      yield* TestClock.adjust("21 seconds")
      expect(yield* Fiber.join(fiber)).toMatchObject({
        status: "unavailable",
        detail: "model discovery failed"
      })
    }).pipe(Effect.provide(layer))
  })

  it.scoped("a runtime without a listing is unsupported", () => {
    const plain = stub("claude", undefined)
    const { layer } = inProcessBridge(box().env({}), [plain.adapter])
    return Effect.gen(function* () {
      const tasks = yield* TaskService
      expect(yield* tasks.models({ runtime: "claude" })).toEqual({
        runtime: "claude",
        status: "unsupported",
        scope: "none",
        source: "claude",
        models: []
      })
    }).pipe(Effect.provide(layer))
  })

  it.scoped(
    "the catalog is cached on the Clock and listed again when stale or when the probe changes",
    () => {
      const codex = stub("codex", () => Effect.succeed(hostileListing))
      const { layer } = inProcessBridge(box().env({}), [codex.adapter])
      return Effect.gen(function* () {
        const tasks = yield* TaskService
        yield* tasks.models({ runtime: "codex" })
        yield* tasks.models({ runtime: "codex" })
        expect(codex.listings()).toBe(1)
        yield* TestClock.adjust("61 seconds")
        yield* tasks.models({ runtime: "codex" })
        expect(codex.listings()).toBe(2)
        codex.setVersion("stub-2")
        yield* tasks.models({ runtime: "codex" })
        expect(codex.listings()).toBe(3)
      }).pipe(Effect.provide(layer))
    }
  )
})

describe("task.submit model", () => {
  it.scoped("a listed model or alias is accepted, another refused; failed discovery does not block", () => {
    const codex = stub("codex", () => Effect.succeed(hostileListing))
    const claude = stub("claude", () => Effect.fail(new ModelDiscoveryFailed({ reason: "down" })))
    const { layer } = inProcessBridge(box().env({}), [codex.adapter, claude.adapter])
    return Effect.gen(function* () {
      const tasks = yield* TaskService
      const submit = (runtime: string, model: string) =>
        tasks.submit({ runtime, workdir: "w1", path: "", profile: "workspace-write", prompt: "x", model })
      const refused = yield* Effect.either(submit("codex", "not-listed"))
      expect(Either.isLeft(refused) && refused.left._tag).toBe("INVALID_REQUEST")
      const listed = yield* submit("codex", "m5")
      expect((yield* awaitStatus(listed.task_id, TERMINAL)).status).toBe("succeeded")
      const unchecked = yield* submit("claude", "anything")
      expect((yield* awaitStatus(unchecked.task_id, TERMINAL)).status).toBe("succeeded")
      expect((yield* tasks.get(unchecked.task_id)).requested_model).toBe("anything")
    }).pipe(Effect.provide(layer))
  })
})
