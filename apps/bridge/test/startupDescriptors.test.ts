/**
 * The bridge starts under a small descriptor limit. Node's ESM loader reads every static import
 * of a module graph at once, one descriptor per file in flight; the daemon's graph (~900 files)
 * needed more than 256 at start-up, and a bridge run with LimitNOFILE=256 failed to start most of
 * the time ("Cannot find package …": a package.json read that met EMFILE). The entry point loads
 * in two stages (main.ts); every one of several starts must now succeed and stop cleanly.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { assertBuilt, call, killAll, makeSandbox, type Sandbox, startBridge } from "./support/daemon.js"

let sandbox: Sandbox | undefined

beforeAll(() => {
  assertBuilt()
})
afterEach(async () => {
  await killAll()
  sandbox?.remove()
})

describe("start-up under a descriptor limit of 256", () => {
  it("five starts in a row each serve a call and stop with code 0", async () => {
    sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "review", runtimes: "fake" }])
    for (let attempt = 0; attempt < 5; attempt++) {
      const bridge = await startBridge(sandbox.env(), 45_000, { maxOpenFiles: 256 })
      const runtimes = await call(bridge.client, "runtime.list", {})
      expect(runtimes.runtimes.map((r) => r.name)).toContain("fake")
      expect(bridge.stderr()).not.toContain("EMFILE")
      expect((await bridge.stop()).code).toBe(0)
    }
  })
})
