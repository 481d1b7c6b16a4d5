import type { ModelListing, ProviderAdapter } from "@serverfs/adapters/port"
import {
  AgentRuntimeUnavailable,
  boundedCatalog,
  InvalidRequest,
  MAX_MODELS,
  type ModelCatalog,
  type RuntimeInfo
} from "@serverfs/domain"
import { Cause, Clock, Effect } from "effect"
import { RuntimeRegistry } from "../RuntimeRegistry.js"

/**
 * Model discovery for runtime.models and for submit's `model` check (bridge-internals §8), with
 * the cost bounded: a listing (a Codex connection, a Claude Code CLI started and stopped) runs at
 * most once per runtime at a time, within `DISCOVERY_TIMEOUT` — under the MCP side's default RPC
 * bound of 30 s, so a runtime that hangs is answered `unavailable`, not a timeout — and its
 * result is kept on the Clock for `FRESH_MS` (a failure for `RETRY_MS`), or until the runtime's
 * probe changes (availability or version). Discovery never starts an inference turn: the adapters
 * only list.
 */
const DISCOVERY_TIMEOUT = "20 seconds"
const PROBE_TIMEOUT = "10 seconds"
const FRESH_MS = 60_000
const RETRY_MS = 10_000

const catalogOf = (
  runtime: string,
  status: "unsupported" | "unavailable",
  detail?: string
): ModelCatalog => ({
  status,
  scope: "none",
  source: runtime,
  models: [],
  ...(detail === undefined ? {} : { detail })
})

const none: ReadonlySet<string> = new Set()
const listingOf = (catalog: ModelCatalog): ModelListing => ({ catalog, accepted: none })

interface Cached {
  readonly probeKey: string
  readonly until: number
  readonly listing: ModelListing
}

export class ModelCatalogs extends Effect.Service<ModelCatalogs>()("@serverfs/bridge/ModelCatalogs", {
  effect: Effect.gen(function* () {
    const registry = yield* RuntimeRegistry
    const cache = new Map<string, Cached>()
    const locks = new Map<string, Effect.Semaphore>()
    const lockOf = (runtime: string): Effect.Semaphore => {
      const existing = locks.get(runtime)
      if (existing !== undefined) return existing
      const lock = Effect.unsafeMakeSemaphore(1)
      locks.set(runtime, lock)
      return lock
    }

    /** A probe that fails, hangs or dies is "unavailable". */
    const probe = (adapter: ProviderAdapter): Effect.Effect<RuntimeInfo> =>
      adapter.probe().pipe(
        Effect.timeout(PROBE_TIMEOUT),
        Effect.catchAllCause(() => Effect.succeed<RuntimeInfo>({ name: adapter.name, available: false }))
      )

    /** The adapter's listing, bounded in time and size; any failure is "model discovery failed". */
    const list = (adapter: ProviderAdapter, listModels: NonNullable<ProviderAdapter["listModels"]>) =>
      listModels().pipe(
        Effect.timeout(DISCOVERY_TIMEOUT),
        Effect.map(
          (listing): ModelListing => ({
            catalog: boundedCatalog(listing.catalog),
            // The names a submit may use: the listed ids and their aliases, never more than twice the cap.
            accepted: new Set([...listing.accepted].slice(0, 2 * MAX_MODELS))
          })
        ),
        // Logged by kind only: a provider's own text may name host paths.
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning("model discovery failed", {
              runtime: adapter.name,
              why: Cause.isFailType(cause) ? cause.error._tag : Cause.isDie(cause) ? "defect" : "interrupted"
            }),
            listingOf(catalogOf(adapter.name, "unavailable", "model discovery failed"))
          )
        )
      )

    /** The listing of an adapter whose probe said `info`: from the cache while fresh. */
    const listingFor = (adapter: ProviderAdapter, info: RuntimeInfo): Effect.Effect<ModelListing> => {
      const name = adapter.name
      if (!info.available) {
        cache.delete(name)
        return Effect.succeed(listingOf(catalogOf(name, "unavailable", "runtime is unavailable")))
      }
      const listModels = adapter.listModels
      if (listModels === undefined) return Effect.succeed(listingOf(catalogOf(name, "unsupported")))
      const probeKey = JSON.stringify([info.available, info.version ?? null])
      const fresh = (now: number) => {
        const hit = cache.get(name)
        return hit !== undefined && hit.probeKey === probeKey && hit.until > now ? hit.listing : undefined
      }
      return lockOf(name).withPermits(1)(
        Effect.gen(function* () {
          const hit = fresh(yield* Clock.currentTimeMillis)
          if (hit !== undefined) return hit
          const listing = yield* list(adapter, listModels)
          const now = yield* Clock.currentTimeMillis
          const ttl = listing.catalog.status === "ok" ? FRESH_MS : RETRY_MS
          cache.set(name, { probeKey, until: now + ttl, listing })
          return listing
        })
      )
    }

    /** runtime.models' catalog: an unknown runtime is AGENT_RUNTIME_UNAVAILABLE. */
    const catalog = (runtime: string): Effect.Effect<ModelCatalog, AgentRuntimeUnavailable> =>
      Effect.suspend(() => {
        const adapter = registry.get(runtime)
        if (adapter === undefined) {
          return Effect.fail(
            new AgentRuntimeUnavailable({ message: `runtime '${runtime}' is not configured in the bridge` })
          )
        }
        return Effect.flatMap(probe(adapter), (info) =>
          Effect.map(listingFor(adapter, info), (listing) => listing.catalog)
        )
      })

    /**
     * Submit's check of a requested model against the runtime's list, where the runtime gives
     * one (status ok). A runtime that lists nothing, or whose discovery is unavailable, does not
     * block the submission: the provider itself then judges the name.
     */
    const checkRequested = (
      adapter: ProviderAdapter,
      info: RuntimeInfo,
      model: string
    ): Effect.Effect<void, InvalidRequest> =>
      Effect.flatMap(listingFor(adapter, info), (listing) =>
        listing.catalog.status !== "ok" || listing.accepted.has(model)
          ? Effect.void
          : Effect.fail(
              new InvalidRequest({
                message: `the model is not one ${adapter.name} lists; see list_agent_models`
              })
            )
      )

    return { catalog, checkRequested } as const
  })
}) {}
