import { Configuration } from "@serverfs/policy"
import { makeLeaseHolder } from "@serverfs/workspace"
import { Effect } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"

export type { GuardState, HeldLease } from "@serverfs/workspace"

/**
 * The bridge's side of the workdir lease: the holder role of the one lease capability in
 * libs/workspace (lease/LeaseHolder.ts), over this bridge's lock directory and sharing mode.
 * Method names and signatures are those TaskService relies on (acquire, release, holds,
 * publishGuard, writeGuard, removeGuard, readGuard, validGuards).
 */
export class BridgeLeases extends Effect.Service<BridgeLeases>()("@serverfs/bridge/BridgeLeases", {
  scoped: Effect.gen(function* () {
    const { global } = yield* Configuration
    const settings = yield* BridgeSettingsTag
    return yield* makeLeaseHolder({ lockDir: global.agentLockDir, peerGid: settings.peerGid })
  })
}) {}
