import { setFlagsFromString } from "node:v8"

/**
 * Keeps V8's heap small, for the two long-running servers (serverfs-mcp, serverfs-bridge), which
 * call this first thing in their entry module (docs/performance.md, "Memory").
 *
 * - `--semi-space-growth-factor=1`: V8 grows the young generation with the allocation rate, up
 *   to 16 MiB per semi-space on 64-bit machines, and those pages stay resident once touched.
 *   Loading the program (effect's schemas, the SDK) is enough to grow it to the maximum: 32 MiB
 *   of RSS that an idle server never gives back. Kept at the initial 1 MiB semi-spaces, the idle
 *   RSS is about 25 MiB lower.
 * - `--heap-growing-percent=20`: the old generation's next limit is 1.2× what survived the last
 *   full collection rather than V8's default of up to 4× for a small heap: the RSS after a
 *   burst of calls is about 5 MiB lower.
 *
 * The price is more frequent collections under load; bench/src/Profile.ts measured no change in
 * the read rows' medians. Heap sizes are fixed when the heap is set up, so only these dynamic
 * factors can still be changed here, and before the heap grows: hence the entry modules set them
 * before they import the rest of their program dynamically. serverfs-mcp's code cache is
 * written under the same flags (V8 refuses a cache made under others; scripts/code-cache.mjs).
 * Reached as `@serverfs/policy/HeapTuning`.
 */
export const keepHeapSmall = (): void => {
  setFlagsFromString("--semi-space-growth-factor=1")
  setFlagsFromString("--heap-growing-percent=20")
}
