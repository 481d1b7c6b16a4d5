/**
 * Tests that need root (chown to another uid, seteuid, setpriv to run a client as another user,
 * mounting a tmpfs) skip with their reason when the suite runs as a normal user, so `npm test`
 * passes for a contributor. CI runs as root and must run them all: `.ci/run` sets
 * TESTS_REQUIRE_ROOT=1, and there a non-root run fails loudly instead of skipping. (Not a
 * SERVERFS_* name: the programs report SERVERFS_* variables nothing reads, and tests that pass
 * their environment on would see it.)
 */
export const runningAsRoot: boolean = process.getuid?.() === 0 && process.geteuid?.() === 0

/**
 * `true` when a test needing root must skip (for `it.skipIf` / `describe.skipIf`). `reason` says
 * what needs root; it is the failure's message where root is required.
 */
export const skipWithoutRoot = (reason: string): boolean => {
  if (runningAsRoot) return false
  if (process.env.TESTS_REQUIRE_ROOT === "1")
    throw new Error(`needs root (${reason}), and TESTS_REQUIRE_ROOT=1 forbids skipping`)
  return true
}
