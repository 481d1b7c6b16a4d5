import { makeScriptedAdapter, type ProviderAdapter } from "@serverfs/adapters"
import type { RuntimeInfo } from "@serverfs/domain"
import { Effect } from "effect"
import { BridgeSettingsTag } from "./BridgeSettingsTag.js"

/**
 * The provider adapters this bridge runs, by runtime name. The scripted runtime `fake` exists
 * only when SERVERFS_AGENT_ENABLE_FAKE_RUNTIME is true. Every adapter is closed with the bridge.
 */
export class RuntimeRegistry extends Effect.Service<RuntimeRegistry>()("@serverfs/bridge/RuntimeRegistry", {
  scoped: Effect.gen(function* () {
    const settings = yield* BridgeSettingsTag
    const adapters = new Map<string, ProviderAdapter>()
    if (settings.enableFakeRuntime) adapters.set("fake", yield* makeScriptedAdapter())
    yield* Effect.addFinalizer(() => Effect.forEach(adapters.values(), (a) => a.close(), { discard: true }))

    const get = (name: string): ProviderAdapter | undefined => adapters.get(name)

    /** Every configured adapter's probe, sorted by name; a probe that fails is just unavailable. */
    const list = (): Effect.Effect<ReadonlyArray<RuntimeInfo>> =>
      Effect.forEach(
        [...adapters.values()].sort((a, b) => a.name.localeCompare(b.name)),
        (adapter) =>
          adapter.probe().pipe(
            Effect.timeout("10 seconds"),
            Effect.catchAllCause(() => Effect.succeed<RuntimeInfo>({ name: adapter.name, available: false }))
          ),
        { concurrency: "unbounded" }
      )

    return { get, list } as const
  })
}) {}
