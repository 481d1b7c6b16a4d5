import { setFlagsFromString } from "node:v8"

/**
 * Keeps V8's young generation at its initial size, for the two long-running servers
 * (serverfs-mcp, serverfs-bridge), which call this first thing in their entry module.
 *
 * V8 grows the young generation with the allocation rate, up to 16 MiB per semi-space on 64-bit
 * machines, and those pages stay resident once touched. Loading the programs (effect's schemas,
 * the SDK) is enough to grow it to the maximum: 32 MiB of RSS that an idle server never gives
 * back. At the initial 1 MiB semi-spaces the idle RSS is about 25–30 MiB lower. The price is
 * more frequent scavenges under load, which bench/ measures (docs/performance.md, "Memory").
 * Heap sizes are fixed when the heap is set up, so only the growth factor can still be changed
 * here, and it has to be set before the heap grows: hence the entry modules set it before they
 * import the rest of their program dynamically. Reached as `@serverfs/policy/HeapTuning`.
 */
export const keepYoungGenerationSmall = (): void => setFlagsFromString("--semi-space-growth-factor=1")
