import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./RepoPaths.js"

/** The built programs of a checkout another user can run. */
export interface ReadableCheckout {
  readonly bridgeMain: string
  readonly mcpMain: string
  /** Removes the mirror, if one was made. */
  readonly remove: () => void
}

const programsOf = (root: string) => ({
  bridgeMain: path.join(root, "apps/bridge/dist/bundle/serverfs-bridge.js"),
  mcpMain: path.join(root, "apps/mcp/dist/bundle/serverfs-mcp.js")
})

/** Whether `uid` can read `file` (every directory above it searchable): asked as that user. */
const readableBy = (uid: number, file: string): boolean =>
  spawnSync(
    "setpriv",
    [
      `--reuid=${uid}`,
      `--regid=${uid}`,
      "--clear-groups",
      process.execPath,
      "-e",
      `require("node:fs").accessSync(${JSON.stringify(file)}, require("node:fs").constants.R_OK)`
    ],
    { stdio: "ignore", cwd: "/", timeout: 30_000 }
  ).status === 0

/**
 * The programs of this checkout where `uid` (a test running processes as another user, as root)
 * can run them: the checkout itself when that user can reach it, otherwise a mirror under a
 * world-searchable temp directory — hard links (a couple of seconds; same file modes, nothing
 * copied) or, across filesystems, a copy. A checkout under a private directory (a home, a
 * mktemp -d) is the usual reason.
 */
export const readableCheckout = (uid: number): ReadableCheckout => {
  if (readableBy(uid, programsOf(repoRoot).bridgeMain))
    return { ...programsOf(repoRoot), remove: () => undefined }
  const mirror = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-checkout-"))
  const linked = spawnSync("cp", ["-al", `${repoRoot}/.`, mirror], { stdio: "ignore" })
  if (linked.status !== 0) {
    const copied = spawnSync("cp", ["-a", `${repoRoot}/.`, mirror], { stdio: "ignore" })
    if (copied.status !== 0) throw new Error("the checkout could not be mirrored for another user")
  }
  // `cp -a src/. dst` gives dst the mode of src: the private directory's, which is the problem.
  fs.chmodSync(mirror, 0o755)
  return { ...programsOf(mirror), remove: () => fs.rmSync(mirror, { recursive: true, force: true }) }
}
