/**
 * The lease probe's reading of /proc/locks (LeaseProbe.ts): a held FLOCK matches the lock file's
 * device and inode as the kernel prints them (MAJOR:MINOR:inode in hex:hex:decimal, including
 * the split encoding of large device numbers); waiters (`->`) and POSIX locks do not count.
 */
import { describe, expect, it } from "vitest"
import { flockListed } from "../src/operator/LeaseProbe.js"

const dev = (major: bigint, minor: bigint): bigint =>
  ((major & 0xfffn) << 8n) | ((major & ~0xfffn) << 32n) | (minor & 0xffn) | ((minor & ~0xffn) << 12n)

describe("flockListed", () => {
  const procLocks = [
    "1: POSIX  ADVISORY  WRITE 812 08:01:555 0 EOF",
    "2: FLOCK  ADVISORY  WRITE 28104 fe:00:7356418 0 EOF",
    "3: -> FLOCK  ADVISORY  WRITE 999 08:01:777 0 EOF",
    "4: FLOCK  ADVISORY  WRITE 1 103:1c2:42 0 EOF"
  ].join("\n")

  it("matches a held flock by device and inode", () => {
    expect(flockListed(procLocks, dev(0xfen, 0n), 7356418n)).toBe(true)
    expect(flockListed(procLocks, dev(0xfen, 0n), 7356419n)).toBe(false)
    expect(flockListed(procLocks, dev(0xfen, 1n), 7356418n)).toBe(false)
  })

  it("ignores POSIX locks and waiters", () => {
    expect(flockListed(procLocks, dev(8n, 1n), 555n)).toBe(false)
    expect(flockListed(procLocks, dev(8n, 1n), 777n)).toBe(false)
  })

  it("decodes large major and minor numbers", () => {
    expect(flockListed(procLocks, dev(0x103n, 0x1c2n), 42n)).toBe(true)
    expect(flockListed("", dev(0x103n, 0x1c2n), 42n)).toBe(false)
  })
})
