#!/usr/bin/env node
import { createRequire } from "node:module"
import { keepHeapSmall } from "@serverfs/policy/HeapTuning"
import { handleProgramArguments } from "@serverfs/policy/ProgramArguments"

/**
 * serverfs-bridge's entry point: it keeps V8's heap small (HeapTuning.ts: the idle
 * daemon's RSS) before anything else is loaded, then starts the daemon (Daemon.ts) in two
 * loading stages.
 */
keepHeapSmall()
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
// The daemon is a dynamic import so that the heap flag above is set before any of it loads; it
// must not be preceded by `import("effect")`: a dynamic import of the package index keeps all
// of it (and fast-check) in the bundle, about 1 MiB of source more to compile and keep resident.
if (start) await import("./Daemon.js")
