// THE attack this package exists for: a symlink swapped into the path between
// the server's check and its use (TOCTOU). Another process atomically
// exchanges `sub` (a real directory) with `swap` (a symlink to a directory
// outside the served root) in a tight loop while we walk root/sub/file.txt.
//
// The fd walk can only ever see `sub` as either the real directory (success,
// "INSIDE") or the symlink (refused: ENOTDIR because of O_DIRECTORY|O_NOFOLLOW).
// Once `subfd` is open it pins the real directory, so a swap after that
// cannot redirect the second openat. openat2 with RESOLVE_BENEATH|NO_SYMLINKS
// gets the same guarantee from the kernel in one call. The naive path-based
// read is shown to escape under the same conditions, so the test can fail.
//
// Each phase runs at least WALKS iterations and then, only if the evidence
// that the race really happened is still missing (a heavily loaded 2-core
// runner can starve the swapper), keeps going up to EXTRA_MS.
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, fstatat, hasOpenat2, isPosixError, O, openat, openat2, RESOLVE, S } from "../src/index.js"
import { makeTempDir, removeTempDir, spawnFixture, waitForExit, waitForLine } from "./helpers.js"

const WALKS = 20_000
const EXTRA_MS = 3_000
// Safety cap for an orphaned swapper; normally it is killed when a phase ends.
const SWAPPER_MAX_MS = "60000"

let base: string
let root: string
let rootfd: number

beforeAll(() => {
  base = makeTempDir()
  root = path.join(base, "root")
  const outside = path.join(base, "outside")
  fs.mkdirSync(root)
  fs.mkdirSync(outside)
  fs.mkdirSync(path.join(root, "sub"))
  fs.writeFileSync(path.join(root, "sub", "file.txt"), "INSIDE")
  fs.writeFileSync(path.join(outside, "file.txt"), "OUTSIDE-SECRET")
  fs.symlinkSync(outside, path.join(root, "swap"))
  rootfd = openat(AT.FDCWD, root, O.RDONLY | O.DIRECTORY)
})

afterAll(() => {
  close(rootfd)
  removeTempDir(base)
})

interface Tally {
  walks: number
  inside: number
  escapes: number
  refused: Record<string, number>
  /** Walks where `sub` had already become the symlink between the two openat calls. */
  swappedMidWalk?: number
}

const newTally = (): Tally => ({ walks: 0, inside: 0, escapes: 0, refused: {} })
const refusedTotal = (t: Tally) => Object.values(t.refused).reduce((a, b) => a + b, 0)

const buf = Buffer.alloc(64)
function readAll(fd: number): string {
  return buf.toString("utf8", 0, fs.readSync(fd, buf, 0, buf.length, 0))
}

function record(tally: Tally, content: string): void {
  if (content === "INSIDE") tally.inside++
  else if (content === "OUTSIDE-SECRET") tally.escapes++
  else throw new Error(`unexpected content ${JSON.stringify(content)}`)
}

function refuse(tally: Tally, err: unknown, allowed: readonly string[]): void {
  if (!isPosixError(err) || !allowed.includes(err.code)) throw err
  tally.refused[err.code] = (tally.refused[err.code] ?? 0) + 1
}

/**
 * Runs `step` while a separate process keeps exchanging root/sub and
 * root/swap: at least `min` times, then until `enough()` or EXTRA_MS more.
 */
async function whileSwapping(
  tally: Tally,
  min: number,
  enough: () => boolean,
  step: () => void
): Promise<void> {
  const child = spawnFixture("swapper.mjs", [root, "sub", "swap", SWAPPER_MAX_MS])
  try {
    await waitForLine(child, "ready")
    for (let i = 0; i < min; i++) {
      tally.walks++
      step()
    }
    const deadline = Date.now() + EXTRA_MS
    while (!enough() && Date.now() < deadline) {
      for (let i = 0; i < 1000; i++) {
        tally.walks++
        step()
      }
    }
  } finally {
    child.kill("SIGKILL")
    await waitForExit(child)
  }
}

describe("symlink-swap race", () => {
  it(`fd walk with O_DIRECTORY|O_NOFOLLOW never escapes (≥ ${WALKS} walks)`, async () => {
    const tally: Tally = { ...newTally(), swappedMidWalk: 0 }
    const enough = () => tally.inside > 0 && refusedTotal(tally) > 0 && (tally.swappedMidWalk ?? 0) > 0
    await whileSwapping(tally, WALKS, enough, () => {
      let subfd: number
      try {
        subfd = openat(rootfd, "sub", O.RDONLY | O.DIRECTORY | O.NOFOLLOW)
      } catch (err) {
        // ENOTDIR: `sub` was the symlink at that instant (see open.test.ts for
        // why it is not ELOOP). ELOOP accepted too, in case a kernel reports it.
        refuse(tally, err, ["ENOTDIR", "ELOOP"])
        return
      }
      try {
        // Not part of the walk: evidence that the swap also lands between
        // the two steps, where only the pinned subfd keeps us inside.
        if ((fstatat(rootfd, "sub", AT.SYMLINK_NOFOLLOW).mode & S.IFMT) === S.IFLNK) {
          tally.swappedMidWalk = (tally.swappedMidWalk ?? 0) + 1
        }
        const fd = openat(subfd, "file.txt", O.RDONLY | O.NOFOLLOW)
        try {
          record(tally, readAll(fd))
        } finally {
          close(fd)
        }
      } finally {
        close(subfd)
      }
    })
    console.log(`[race] fd walk: ${JSON.stringify(tally)}`)
    expect(tally.escapes).toBe(0)
    expect(tally.inside + refusedTotal(tally)).toBe(tally.walks)
    expect(tally.walks).toBeGreaterThanOrEqual(WALKS)
    // The swap really raced the walk: both outcomes, and swaps mid-walk.
    expect(tally.inside).toBeGreaterThan(0)
    expect(refusedTotal(tally)).toBeGreaterThan(0)
    expect(tally.swappedMidWalk).toBeGreaterThan(0)
  })

  it.skipIf(!hasOpenat2)(
    `openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS never escapes (≥ ${WALKS} opens)`,
    async () => {
      const tally = newTally()
      const enough = () => tally.inside > 0 && refusedTotal(tally) > 0
      await whileSwapping(tally, WALKS, enough, () => {
        let fd: number
        try {
          fd = openat2(
            rootfd,
            "sub/file.txt",
            O.RDONLY | O.NOFOLLOW,
            0,
            RESOLVE.BENEATH | RESOLVE.NO_SYMLINKS
          )
        } catch (err) {
          // ELOOP: `sub` was the symlink. EAGAIN: the kernel saw a concurrent
          // rename and refused rather than risk a wrong answer (retryable).
          refuse(tally, err, ["ELOOP", "EXDEV", "EAGAIN"])
          return
        }
        try {
          record(tally, readAll(fd))
        } finally {
          close(fd)
        }
      })
      console.log(`[race] openat2: ${JSON.stringify(tally)}`)
      expect(tally.escapes).toBe(0)
      expect(tally.inside + refusedTotal(tally)).toBe(tally.walks)
      expect(tally.inside).toBeGreaterThan(0)
      expect(refusedTotal(tally)).toBeGreaterThan(0)
    }
  )

  it("the naive path-based read DOES escape in the same setup (the test can fail)", async () => {
    const tally = newTally()
    const target = path.join(root, "sub", "file.txt")
    await whileSwapping(
      tally,
      WALKS,
      () => tally.escapes > 0,
      () => {
        try {
          record(tally, fs.readFileSync(target, "utf8"))
        } catch (err) {
          refuse(tally, err, ["ENOENT", "ENOTDIR"])
        }
      }
    )
    console.log(`[race] naive fs.readFileSync: ${JSON.stringify(tally)}`)
    expect(tally.escapes).toBeGreaterThan(0)
  })

  it("check-then-use (lstat says real directory, then read by path) also escapes", async () => {
    // The classic TOCTOU: the check is right when made and wrong when used.
    const tally = newTally()
    const sub = path.join(root, "sub")
    const target = path.join(sub, "file.txt")
    await whileSwapping(
      tally,
      1_000,
      () => tally.escapes > 0,
      () => {
        try {
          if (fs.lstatSync(sub).isSymbolicLink()) {
            tally.refused.checked = (tally.refused.checked ?? 0) + 1
            return
          }
          record(tally, fs.readFileSync(target, "utf8"))
        } catch (err) {
          refuse(tally, err, ["ENOENT", "ENOTDIR"])
        }
      }
    )
    console.log(`[race] naive lstat-then-read: ${JSON.stringify(tally)}`)
    expect(tally.escapes).toBeGreaterThan(0)
  })
})
