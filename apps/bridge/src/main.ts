#!/usr/bin/env node
import { setFlagsFromString } from "node:v8"

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
// Node's ESM loader reads every static import of a graph at once, one descriptor per file in
// flight: the daemon's ~900 modules took more than 256 descriptors at start-up, so a bridge
// under a small LimitNOFILE failed to start ("Cannot find package": a package.json read that
// met EMFILE). Effect's own ~400 modules are loaded first, as one stage, which keeps the peak
// under 200 (apps/bridge/test/startupDescriptors.test.ts).
await import("effect")
await import("./Daemon.js")
