import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * A podman configuration of the test's own: image store, run root and engine settings live under
 * `base`, so the test neither sees nor leaves images in the machine's store, and runs the same on
 * a developer host and on CI's fresh root VM.
 *
 * - vfs storage: works on any filesystem and inside another container (overlay may not).
 * - runc with cgroupfs: there is no systemd to manage cgroups, and crun refuses hosts that mount
 *   cgroup v1 controllers next to a cgroup v2 hierarchy ("hybrid mode").
 * - nproc and nofile defaults of 4096 (LIMITS).
 */
export interface PodmanStore {
  /** The environment podman and the build script must run with. */
  readonly env: Record<string, string>
  /**
   * `podman run` flags this host needs: once a run names any --ulimit (compose's nofile), podman
   * drops default_ulimits and asks for its built-in nproc maximum again.
   */
  readonly hostRunFlags: ReadonlyArray<string>
  readonly remove: () => void
}

/**
 * Limits below any host's hard limits. Rootful podman otherwise asks for its built-in maxima, which
 * fails where root lacks CAP_SYS_RESOURCE (this machine). nproc counts every process of the uid on
 * the host, so it stays a test setting and is not part of compose.yaml.
 */
const LIMITS = ["nproc=4096:4096", "nofile=4096:4096"]

export const makePodmanStore = (base: string): PodmanStore => {
  const has = (binary: string) => spawnSync(binary, ["--version"]).status === 0
  const containersConf = path.join(base, "containers.conf")
  const storageConf = path.join(base, "storage.conf")
  fs.writeFileSync(
    containersConf,
    [
      "[containers]",
      `default_ulimits = [${LIMITS.map((limit) => `"${limit}"`).join(", ")}]`,
      "[engine]",
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      has("runc") ? 'runtime = "runc"' : "",
      ""
    ].join("\n")
  )
  fs.writeFileSync(
    storageConf,
    [
      "[storage]",
      'driver = "vfs"',
      `graphroot = "${path.join(base, "storage")}"`,
      `runroot = "${path.join(base, "run")}"`,
      ""
    ].join("\n")
  )
  const env = {
    ...(process.env as Record<string, string>),
    CONTAINERS_CONF: containersConf,
    CONTAINERS_STORAGE_CONF: storageConf,
    TMPDIR: base
  }
  return {
    env,
    hostRunFlags: LIMITS.filter((limit) => limit.startsWith("nproc=")).flatMap((limit) => [
      "--ulimit",
      limit
    ]),
    remove: () => {
      // Not `system reset`: that also clears the machine's network configuration.
      spawnSync("podman", ["rm", "--all", "--force"], { env })
      spawnSync("podman", ["rmi", "--all", "--force"], { env })
      fs.rmSync(base, { recursive: true, force: true })
    }
  }
}
