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
// The shipped program is the bundle (scripts/bundle.mjs): a handful of files, so start-up no
// longer opens one descriptor per module (a bridge under LimitNOFILE=256 once failed to start
// while Node's ESM loader read ~900 modules at once; apps/bridge/test/startupDescriptors.test.ts).
// The daemon is a dynamic import so that the V8 flag above is set before any of it loads; it
// must not be preceded by `import("effect")`: a dynamic import of the package index keeps all
// of it (and fast-check) in the bundle, about 1 MiB of source more to compile and keep resident.
if (start) await import("./Daemon.js")
