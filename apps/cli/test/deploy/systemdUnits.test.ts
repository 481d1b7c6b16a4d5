import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { repoRoot } from "@serverfs/testkit"
import { deployDir, dropInsOf, lastValue, settingsOf, unitNames } from "./DeployFiles.js"

/**
 * The systemd --user units in docs/deploy: the hardening options are ones a per-user service
 * manager supports (systemd.exec(5), v252), the restart policy does not loop on a configuration
 * error, and `systemd-analyze --user verify` accepts each unit, instantiated the way the
 * walk-through installs it, without printing a single warning.
 */

/** systemd.exec(5): "only available for system services and not supported ... per-user instances". */
const SYSTEM_ONLY = [
  "User",
  "Group",
  "DynamicUser",
  "SupplementaryGroups",
  "PAMName",
  "RootImage",
  "RootImageOptions",
  "RootHash",
  "RootHashSignature",
  "RootVerity",
  "ProtectProc",
  "ProcSubset",
  "MountImages",
  "ExtensionImages",
  "ExtensionDirectories",
  "SELinuxContext",
  "AppArmorProfile",
  "SmackProcessLabel",
  "ProtectControlGroups",
  "RemoveIPC",
  "LogNamespace"
]

/** systemd.exec(5): available to a per-user manager only "when PrivateUsers= is enabled". */
const NEEDS_PRIVATE_USERS = [
  "ProtectSystem",
  "ProtectHome",
  "ReadWritePaths",
  "ReadOnlyPaths",
  "InaccessiblePaths",
  "ExecPaths",
  "NoExecPaths",
  "TemporaryFileSystem",
  "BindPaths",
  "BindReadOnlyPaths",
  "PrivateTmp",
  "PrivateDevices",
  "PrivateNetwork",
  "NetworkNamespacePath",
  "PrivateIPC",
  "IPCNamespacePath",
  "PrivateMounts",
  "MountFlags",
  "MountAPIVFS",
  "ProtectHostname",
  "ProtectClock",
  "ProtectKernelTunables",
  "ProtectKernelModules",
  "ProtectKernelLogs",
  "CapabilityBoundingSet",
  "AmbientCapabilities"
]

const hasSystemdAnalyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" }).status === 0

const scratch = mkdtempSync(path.join(tmpdir(), "serverfs-units-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/**
 * The units as README.md installs them, with the two documented paths replaced by real ones: the
 * node that runs this test and this source tree (built: the test command builds first).
 */
const instantiate = (
  into: string,
  edit: (unit: string, text: string) => string = (_, text) => text,
  extraDropIns: Readonly<Record<string, ReadonlyArray<string>>> = {}
) => {
  mkdirSync(into, { recursive: true })
  for (const unit of unitNames) {
    const text = readFileSync(path.join(deployDir, unit), "utf8")
      .replaceAll("/usr/bin/node ", `${process.execPath} `)
      .replaceAll("%h/.local/lib/serverfs/", `${repoRoot}/`)
    writeFileSync(path.join(into, unit), edit(unit, text))
    for (const dropIn of dropInsOf(unit)) {
      mkdirSync(path.join(into, path.dirname(dropIn)), { recursive: true })
      writeFileSync(path.join(into, dropIn), readFileSync(path.join(deployDir, dropIn)))
    }
    for (const file of extraDropIns[unit] ?? []) {
      mkdirSync(path.join(into, `${unit}.d`), { recursive: true })
      writeFileSync(
        path.join(into, `${unit}.d`, path.basename(file)),
        readFileSync(path.join(deployDir, file))
      )
    }
  }
}

/**
 * A user manager's verify needs a runtime directory and nothing else: no systemd running, no
 * login session (CI runs as root in a container). HOME is a scratch one so that %h resolves
 * somewhere harmless.
 */
const verify = (dir: string) => {
  const home = path.join(scratch, "home")
  const runtime = path.join(scratch, "runtime")
  mkdirSync(home, { recursive: true })
  mkdirSync(runtime, { recursive: true, mode: 0o700 })
  return spawnSync(
    "systemd-analyze",
    ["--user", "verify", ...unitNames.map((unit) => path.join(dir, unit))],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        XDG_RUNTIME_DIR: runtime,
        SYSTEMD_PAGER: ""
      },
      encoding: "utf8",
      timeout: 30_000
    }
  )
}

describe("systemd --user units (docs/deploy)", () => {
  for (const unit of unitNames) {
    const settings = settingsOf(unit)
    const service = settings.filter((s) => s.section === "Service")

    it(`${unit}: no option a per-user manager lacks; namespacing only with PrivateUsers=yes`, () => {
      expect(settings.filter((s) => s.key === "\\")).toEqual([])
      expect(service.filter((s) => SYSTEM_ONLY.includes(s.key)).map((s) => s.key)).toEqual([])
      const namespacing = service.filter((s) => NEEDS_PRIVATE_USERS.includes(s.key)).map((s) => s.key)
      if (namespacing.length > 0) expect(lastValue(settings, "Service", "PrivateUsers")).toBe("yes")
      // V8's JIT needs writable+executable mappings: Node aborts under MemoryDenyWriteExecute.
      expect(service.map((s) => s.key)).not.toContain("MemoryDenyWriteExecute")
    })

    it(`${unit}: restarts on failure but never on exit 2 (configuration error), bounded`, () => {
      expect(lastValue(settings, "Service", "Restart")).toBe("on-failure")
      expect(lastValue(settings, "Service", "RestartPreventExitStatus")).toBe("2")
      expect(Number(lastValue(settings, "Service", "RestartSec"))).toBeGreaterThan(0)
      expect(Number(lastValue(settings, "Unit", "StartLimitBurst"))).toBeGreaterThan(0)
      expect(lastValue(settings, "Unit", "StartLimitIntervalSec")).toBeDefined()
      expect(lastValue(settings, "Service", "KillMode")).toBe("mixed")
      expect(lastValue(settings, "Service", "NoNewPrivileges")).toBe("yes")
      expect(lastValue(settings, "Install", "WantedBy")).toBe("default.target")
    })

    it(`${unit}: reads the shared file through ServerFS's strict parser, not systemd's`, () => {
      expect(service).toContainEqual(
        expect.objectContaining({
          key: "Environment",
          value: "SERVERFS_ENV_FILE=%h/.config/serverfs/serverfs.env"
        })
      )
      const execStart = lastValue(settings, "Service", "ExecStart") ?? ""
      expect(execStart).toMatch(
        /^\/usr\/bin\/node %h\/\.local\/lib\/serverfs\/apps\/(bridge|mcp)\/dist\/bundle\/serverfs-(bridge|mcp)\.js$/
      )
    })
  }

  it("serverfs-mcp-http.service: HTTP transport, its own EnvironmentFile, ordered after the bridge by a drop-in", () => {
    const settings = settingsOf("serverfs-mcp-http.service")
    expect(settings).toContainEqual(
      expect.objectContaining({ key: "Environment", value: "SERVERFS_MCP_TRANSPORT=http" })
    )
    expect(lastValue(settings, "Service", "EnvironmentFile")).toBe("%h/.config/serverfs/mcp-http.env")
    expect(lastValue(settings, "Service", "ProtectHome")).toBe("read-only")
    expect(lastValue(settings, "Service", "ProtectSystem")).toBe("strict")
    expect(lastValue(settings, "Unit", "Wants")).toBe("serverfs-bridge.service")
    expect(lastValue(settings, "Unit", "After")).toBe("serverfs-bridge.service")
  })

  it("no-user-namespaces.conf turns off PrivateUsers and every option that needs it, and nothing else", () => {
    const unit = "serverfs-mcp-http.service"
    const before = settingsOf(unit)
    const after = settingsOf(unit, ["no-user-namespaces.conf"])
    expect(lastValue(after, "Service", "PrivateUsers")).toBe("no")
    const namespacing = [
      ...new Set(before.filter((s) => NEEDS_PRIVATE_USERS.includes(s.key)).map((s) => s.key))
    ]
    expect(namespacing.length).toBeGreaterThan(5)
    for (const key of namespacing) expect(["no", ""], key).toContain(lastValue(after, "Service", key))
    const fallback = settingsOf(unit, ["no-user-namespaces.conf"]).slice(before.length)
    expect(
      fallback.map((s) => s.key).filter((key) => key !== "PrivateUsers" && !NEEDS_PRIVATE_USERS.includes(key))
    ).toEqual([])
  })

  it.skipIf(!hasSystemdAnalyze)("systemd-analyze --user verify: every unit and drop-in, no warning", () => {
    const dir = path.join(scratch, "units")
    instantiate(dir)
    for (const unit of unitNames) {
      const execStart = readFileSync(path.join(dir, unit), "utf8").match(/^ExecStart=(\S+) (\S+)$/m)
      expect(execStart?.[1]).toBe(process.execPath)
      expect(existsSync(execStart?.[2] ?? "")).toBe(true)
    }
    const result = verify(dir)
    expect(result.stderr).toBe("")
    expect(result.stdout).toBe("")
    expect(result.status).toBe(0)
  })

  it.skipIf(!hasSystemdAnalyze)(
    "systemd-analyze --user verify: with no-user-namespaces.conf too, no warning",
    () => {
      const dir = path.join(scratch, "units-no-userns")
      instantiate(dir, undefined, { "serverfs-mcp-http.service": ["no-user-namespaces.conf"] })
      const result = verify(dir)
      expect(result.stderr).toBe("")
      expect(result.stdout).toBe("")
      expect(result.status).toBe(0)
    }
  )

  it.skipIf(!hasSystemdAnalyze)("the verify check fails on a warning (an unknown key)", () => {
    const dir = path.join(scratch, "units-broken")
    instantiate(dir, (unit, text) =>
      unit === "serverfs-bridge.service" ? `${text}\n[Service]\nNoSuchOption=yes\n` : text
    )
    const result = verify(dir)
    expect(result.stderr).toContain("NoSuchOption")
  })
})
