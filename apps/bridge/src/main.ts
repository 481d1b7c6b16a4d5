#!/usr/bin/env node
import { createRequire } from "node:module"
import { setFlagsFromString } from "node:v8"
import { handleProgramArguments } from "@serverfs/policy/ProgramArguments"

/**
 * serverfs-bridge's entry point. It sets one V8 flag before anything else is loaded, then starts
 * the daemon (Daemon.ts) in two loading stages.
 *
 * `--semi-space-growth-factor=1`: V8 grows the young generation with the allocation rate, up to
 * 16 MiB per semi-space on 64-bit machines, and those pages stay resident once touched. The
 * bridge is an idle daemon most of the time; keeping the young generation at its initial 1 MiB
 * semi-spaces makes its idle RSS about 30 MiB lower. The price is more frequent scavenges under
 * load (about 8% more CPU in a submit loop), with no change in events persisted per second that
 * bench/ can measure (docs/performance.md). Heap sizes are fixed when the heap is set up, so
 * only the growth factor can still be changed here; it has to be set before the heap grows,
 * hence this module and the dynamic import.
 */
setFlagsFromString("--semi-space-growth-factor=1")
// --help/--version print and exit 0, any other argument exits 2, before the configuration is
// read: the decision module imports nothing, so a normal start pays for one small file.
const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }
const start = handleProgramArguments({
  name: "serverfs-bridge",
  version,
  description:
    "The Agent Bridge daemon: runs delegated Agent tasks for serverfs-mcp and owns the workdir leases,\nserving its private RPC on a Unix socket (SERVERFS_AGENT_BRIDGE_SOCKET)."
})
// Node's ESM loader reads every static import of a graph at once, one descriptor per file in
// flight: the daemon's ~900 modules took more than 256 descriptors at start-up, so a bridge
// under a small LimitNOFILE failed to start ("Cannot find package": a package.json read that
// met EMFILE). Effect's own ~400 modules are loaded first, as one stage, which keeps the peak
// under 200 (apps/bridge/test/startupDescriptors.test.ts).
if (start) {
  await import("effect")
  await import("./Daemon.js")
}
