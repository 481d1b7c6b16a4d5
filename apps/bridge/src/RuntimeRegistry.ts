import { ScriptedAdapter } from "@serverfs/adapters/fake"
import { type ProviderAdapter, ProviderAdapterTag } from "@serverfs/adapters/port"
import type { RuntimeInfo } from "@serverfs/domain"
import { Configuration } from "@serverfs/policy"
import { Context, Effect, Layer } from "effect"
import { BridgeSettingsTag } from "./BridgeSettingsTag.js"

/**
 * The provider adapters this bridge runs, by runtime name. The scripted runtime `fake` exists
 * only when SERVERFS_AGENT_ENABLE_FAKE_RUNTIME is true. Each adapter's layer is built in this
 * service's scope, so whatever an adapter acquired is released (its turns stopped) with the
 * bridge.
 *
 * The Codex and Claude adapters are loaded only when some workdir allowlists them: the Claude
 * Agent SDK and the WebSocket client weigh about 25 MiB of resident memory in a bridge that
 * never uses them.
 */
export class RuntimeRegistry extends Effect.Service<RuntimeRegistry>()("@serverfs/bridge/RuntimeRegistry", {
  scoped: Effect.gen(function* () {
    const settings = yield* BridgeSettingsTag
    const { workdirs } = yield* Configuration
    /** Does some workdir allowlist `runtime`? */
    const allowlisted = (runtime: string): boolean =>
      workdirs.some((w) => (w.agentRuntimes as ReadonlyArray<string>).includes(runtime))
    const adapters = new Map<string, ProviderAdapter>()
    /** The port an adapter's layer provides, built into this scope. */
    const build = (layer: Layer.Layer<ProviderAdapterTag>) =>
      Effect.map(Layer.build(layer), Context.get(ProviderAdapterTag))
    if (settings.enableFakeRuntime) adapters.set("fake", yield* build(ScriptedAdapter.layer))
    // Codex: only when some workdir allowlists it (native mode; settings SERVERFS_CODEX_*).
    if (allowlisted("codex")) {
      const { CodexAdapter } = yield* Effect.promise(() => import("@serverfs/adapters/codex"))
      adapters.set(
        "codex",
        yield* build(
          CodexAdapter.layer({
            bin: settings.codexBin,
            codexHome: settings.codexHome,
            transport: settings.codexTransport,
            autostart: settings.codexAutostart,
            requestTimeoutSeconds: settings.codexRequestTimeoutSeconds
          })
        )
      )
    }
    // Claude: only when some workdir allowlists it (native mode; settings SERVERFS_CLAUDE_*). The
    // CLI runs with the bridge's own environment (the operator's native one), less ServerFS's.
    if (allowlisted("claude")) {
      const { ClaudeAdapter } = yield* Effect.promise(() => import("@serverfs/adapters/claude"))
      adapters.set(
        "claude",
        yield* build(
          ClaudeAdapter.layer({
            claudeBin: settings.claudeBin,
            useBundledCli: settings.claudeUseBundledCli,
            probeTimeoutSeconds: settings.claudeProbeTimeoutSeconds,
            environment: process.env
          })
        )
      )
    }

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

    /** The configured runtimes' names, sorted as `list` sorts them, without probing any (a probe may spawn the provider's CLI). */
    const names = (): ReadonlyArray<string> => [...adapters.keys()].sort((a, b) => a.localeCompare(b))

    return { get, list, names } as const
  })
}) {}
