import { type BridgeSettings, loadBridgeSettings } from "@serverfs/policy"
import { Context, Layer } from "effect"

/** The bridge's own settings as a service, so tests provide them directly. */
export class BridgeSettingsTag extends Context.Tag("@serverfs/bridge/BridgeSettings")<
  BridgeSettingsTag,
  BridgeSettings
>() {
  static readonly layer = Layer.effect(BridgeSettingsTag, loadBridgeSettings)
}
