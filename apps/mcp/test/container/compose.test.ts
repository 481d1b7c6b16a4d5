import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { containerDir, hardeningFlags, loadComposeService } from "./ComposeProfile.js"

/**
 * The container profile's promises (spec v0.2 §2, v0.3 §3.1 and §6), read off compose.yaml as a
 * compose implementation parses it. image.test.ts runs the image with the same keys.
 */
const service = loadComposeService()
/** How compose.yaml writes "this variable, or the default" (left for compose to interpolate). */
const withDefault = (name: string, fallback: string) => `\${${name}:-${fallback}}`

describe("compose.yaml: the serverfs-mcp container profile", () => {
  it("has a read-only root filesystem, no capability and no privilege escalation", () => {
    expect(service.read_only).toBe(true)
    expect(service.cap_drop).toEqual(["ALL"])
    expect(service.cap_add).toBeUndefined()
    expect(service.privileged).toBeUndefined()
    expect(service.security_opt).toEqual(["no-new-privileges:true"])
  })

  it("has no network, no published or exposed port and no host namespace", () => {
    expect(service.network_mode).toBe("none")
    for (const key of ["ports", "expose", "networks", "pid", "ipc", "userns_mode", "devices", "extra_hosts"])
      expect(service[key], key).toBeUndefined()
  })

  it("runs as the operator's numeric uid:gid, never root, from a locally built image", () => {
    expect(service.user).toMatch(/^\$\{UID:\?[^}]*\}:\$\{GID:\?[^}]*\}$/)
    expect(service.pull_policy).toBe("never")
    expect(service.image).toMatch(/localhost\/serverfs-mcp/)
  })

  it("speaks stdio: stdin open, no tmpfs, bounded processes and descriptors", () => {
    expect(service.stdin_open).toBe(true)
    expect(service.tmpfs).toBeUndefined()
    expect(service.pids_limit).toBeGreaterThan(0)
    expect(service.ulimits?.nofile).toEqual({ soft: 4096, hard: 4096 })
  })

  it("mounts workdir 01 with the one READ_ONLY variable that also drives the server", () => {
    const workdir = service.volumes.find((volume) => volume.target === "/workdirs/01")
    expect(workdir?.type).toBe("bind")
    expect(workdir?.read_only).toBe(withDefault("WORKDIR_01_READ_ONLY", "true"))
    expect(service.environment.WORKDIR_01_READ_ONLY).toBe(withDefault("WORKDIR_01_READ_ONLY", "true"))
    expect(service.environment.WORKDIR_01_PATH).toBe("/workdirs/01")
  })

  it("mounts the bridge socket and lock directories read-only where the server looks for them", () => {
    const mount = (target: string) => service.volumes.find((volume) => volume.target === target)
    expect(mount("/run/serverfs-agent-bridge")).toMatchObject({ type: "bind", read_only: true })
    expect(mount("/run/serverfs-agent-locks")).toMatchObject({ type: "bind", read_only: true })
    expect(path.dirname(service.environment.SERVERFS_AGENT_BRIDGE_SOCKET ?? "")).toBe(
      "/run/serverfs-agent-bridge"
    )
    expect(service.environment.SERVERFS_AGENT_LOCK_DIR).toBe("/run/serverfs-agent-locks")
    // Every other mount is one of these three: nothing else of the host reaches the container.
    expect(service.volumes).toHaveLength(3)
  })

  it("translates into the podman run flags the image test uses", () => {
    expect(hardeningFlags(service)).toEqual([
      "--read-only",
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges:true",
      "--network",
      "none",
      "--pids-limit",
      String(service.pids_limit),
      "--ulimit",
      "nofile=4096:4096"
    ])
  })

  it("example env names every variable compose.yaml requires", () => {
    const example = fs.readFileSync(path.join(containerDir, "env.example"), "utf8")
    const compose = fs.readFileSync(path.join(containerDir, "compose.yaml"), "utf8")
    const required = [...compose.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((match) => match[1])
    expect(required.length).toBeGreaterThan(0)
    for (const name of new Set(required)) expect(example, name).toMatch(new RegExp(`^${name}=`, "m"))
  })
})
