import { type BridgeSettings, Configuration, loadBridgeSettingsFor } from "@serverfs/policy"
import { Context, Effect, Layer } from "effect"

/** The bridge's own settings as a service, so tests provide them directly. */
export class BridgeSettingsTag extends Context.Tag("@serverfs/bridge/BridgeSettings")<
  BridgeSettingsTag,
  BridgeSettings
>() {
  /** Checked against the workdirs: the state directory must lie outside every one of them. */
  static readonly layer = Layer.effect(
    BridgeSettingsTag,
    Effect.flatMap(Configuration, ({ workdirs }) => loadBridgeSettingsFor(workdirs))
  )
}
