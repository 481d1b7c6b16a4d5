import { spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { expect, layer } from "@effect/vitest"
import { cliMain, SharedTempTree } from "@serverfs/testkit"
import { Effect } from "effect"

/** `serverfs config check` validates exactly what serverfs-mcp would, without printing host paths. */

const asRoot = process.getuid?.() === 0

const run = (env: Record<string, string>, ...extra: ReadonlyArray<string>) =>
  spawnSync(process.execPath, [cliMain, "config", "check", ...extra], {
    env: { PATH: process.env.PATH ?? "/usr/bin", ...env },
    encoding: "utf8",
    timeout: 30_000
  })

layer(SharedTempTree.layer())("serverfs config check", (it) => {
  it.effect("summarises a valid configuration and exits 0, without host paths", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const result = run({
        WORKDIR_01_ALIAS: "docs",
        WORKDIR_01_PATH: tree.root,
        WORKDIR_02_ALIAS: "scratch",
        WORKDIR_02_PATH: tree.outside,
        WORKDIR_02_READ_ONLY: "false",
        SERVERFS_EXTRA_DENY_GLOBS: "secret/**"
      })
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("configuration ok: 2 workdir(s), 1 read-write")
      expect(result.stdout).toContain("WORKDIR_01 docs: read-only")
      expect(result.stdout).toContain("WORKDIR_02 scratch: read-write")
      expect(result.stdout).toContain("1 deny glob(s)")
      expect(result.stdout + result.stderr).not.toContain(tree.base)
    })
  )

  it.effect(
    "warns about variables nothing reads (names from the environment and the .env file, no values)",
    () =>
      Effect.gen(function* () {
        const tree = yield* SharedTempTree
        const envFile = `${tree.base}/serverfs.env`
        writeFileSync(envFile, "SERVERFS_MAX_READ_BYTE=1000\n")
        const result = run({
          WORKDIR_01_ALIAS: "docs",
          WORKDIR_01_PATH: tree.root,
          WORKDIR_1_READ_ONLY: "false",
          SERVERFS_ENV_FILE: envFile
        })
        expect(result.status).toBe(0)
        expect(result.stdout).toContain("configuration ok: 1 workdir(s), 0 read-write")
        expect(result.stdout).toContain(
          "warning: 2 variable(s) that ServerFS does not read (misspelled?): SERVERFS_MAX_READ_BYTE, WORKDIR_1_READ_ONLY"
        )
        expect(result.stdout).not.toContain("=1000")
        // A clean configuration has no such warning line.
        expect(run({ WORKDIR_01_ALIAS: "docs", WORKDIR_01_PATH: tree.root }).stdout).not.toContain(
          "misspelled"
        )
      })
  )

  it.effect("a bad value exits 2 with the servers' one-line message", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const result = run({
        WORKDIR_01_ALIAS: "docs",
        WORKDIR_01_PATH: tree.root,
        WORKDIR_01_READ_ONLY: "nah"
      })
      expect(result.status).toBe(2)
      expect(result.stderr).toBe(
        "ServerFS: configuration error: WORKDIR_01_READ_ONLY: expected one of true/false/1/0/yes/no/on/off\n"
      )
    })
  )

  it.effect("issue 14: a stray line before SERVERFS_EXTRA_DENY_GLOBS is no longer 'configuration ok'", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const envFile = `${tree.base}/stray.env`
      writeFileSync(envFile, "WORKDIR_01_ALIAS=docs\nstray\nSERVERFS_EXTRA_DENY_GLOBS=normal.txt\n")
      const result = run({ WORKDIR_01_PATH: tree.root, SERVERFS_ENV_FILE: envFile })
      expect(result.status).toBe(2)
      expect(result.stdout).toContain("configuration has 1 error(s), listed on stderr")
      expect(result.stdout).not.toContain("configuration ok")
      expect(result.stderr).toBe(
        'ServerFS: configuration error: SERVERFS_ENV_FILE: line 2: not a NAME=value line (no "=")\n'
      )
    })
  )

  it.effect("overlapping workdirs exit 2; read-only ones without delegation pass", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const nested = run({
        WORKDIR_01_ALIAS: "proj",
        WORKDIR_01_PATH: tree.base,
        WORKDIR_01_READ_ONLY: "false",
        WORKDIR_02_ALIAS: "sub",
        WORKDIR_02_PATH: tree.root
      })
      expect(nested.status).toBe(2)
      expect(nested.stderr).toBe(
        'ServerFS: configuration error: WORKDIR_02_PATH: is inside WORKDIR_01_PATH (workdir "proj"); overlapping workdirs must all be read-only with Agent delegation disabled\n'
      )
      const root = run({ WORKDIR_01_ALIAS: "host", WORKDIR_01_PATH: "/", WORKDIR_01_READ_ONLY: "false" })
      expect(root.status).toBe(2)
      expect(root.stderr).toContain("WORKDIR_01_PATH: is the filesystem root")
      const confined = run({
        WORKDIR_01_ALIAS: "proj",
        WORKDIR_01_PATH: tree.base,
        WORKDIR_02_ALIAS: "sub",
        WORKDIR_02_PATH: tree.root
      })
      expect(confined.status).toBe(0)
      expect(confined.stdout).toContain("configuration ok: 2 workdir(s), 0 read-write")
    })
  )

  it.effect("with the bridge enabled, the bridge's own settings are checked too", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const base = {
        WORKDIR_01_ALIAS: "docs",
        WORKDIR_01_PATH: tree.root,
        SERVERFS_AGENT_BRIDGE_ENABLED: "true",
        SERVERFS_AGENT_LOCK_DIR: `${tree.base}/locks`,
        SERVERFS_AGENT_BRIDGE_SOCKET: `${tree.base}/run/bridge.sock`,
        SERVERFS_AGENT_BRIDGE_STATE_DIR: `${tree.base}/state`
      }
      const ok = run(base)
      expect(ok.status).toBe(0)
      expect(ok.stdout).toContain("bridge: task timeout 7200s")
      const bad = run({ ...base, SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "0" })
      expect(bad.status).toBe(2)
      expect(bad.stderr).toBe(
        "ServerFS: configuration error: SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: expected a positive integer\n"
      )
    })
  )

  it.effect(
    "every problem at once: env file lines, variables and workdirs, each as the server's line, in order",
    () =>
      Effect.gen(function* () {
        const tree = yield* SharedTempTree
        const envFile = `${tree.base}/many.env`
        writeFileSync(envFile, "WORKDIR_01_ALIAS=docs\nstray\nSERVERFS_MAX_READ_BYTES=-5\nbad name=1\n")
        const result = run({
          SERVERFS_ENV_FILE: envFile,
          WORKDIR_01_PATH: tree.root,
          WORKDIR_01_READ_ONLY: "nah",
          WORKDIR_02_ALIAS: "nopath"
        })
        expect(result.status).toBe(2)
        expect(result.stderr.split("\n").filter((l) => l !== "")).toEqual([
          'ServerFS: configuration error: SERVERFS_ENV_FILE: line 2: not a NAME=value line (no "=")',
          'ServerFS: configuration error: SERVERFS_ENV_FILE: line 4: not a NAME=value line (the name is invalid or not directly before "=")',
          "ServerFS: configuration error: SERVERFS_MAX_READ_BYTES: expected a positive integer",
          "ServerFS: configuration error: WORKDIR_01_READ_ONLY: expected one of true/false/1/0/yes/no/on/off",
          "ServerFS: configuration error: WORKDIR_02_PATH: is required when WORKDIR_02_ALIAS is set"
        ])
        expect(result.stdout).toContain("configuration has 5 error(s)")
        expect(result.stdout).toMatch(/^SERVERFS_MAX_READ_BYTES +\(error\) +file$/m)
        // The env file's path is the operator's own setting; the workdir's host path stays out.
        expect(result.stdout).toContain(`env file: ${envFile}`)
        expect(result.stdout).not.toContain(tree.root)
      })
  )

  it.effect("a lenient setting that fell back says so (source fallback, and a warning); exit stays 0", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const result = run({
        WORKDIR_01_ALIAS: "docs",
        WORKDIR_01_PATH: tree.root,
        SERVERFS_DEFAULT_LIST_LIMIT: "lots",
        SERVERFS_LOG_LEVEL: "loud",
        SERVERFS_MAX_LIST_ENTRIES: "200"
      })
      expect(result.status).toBe(0)
      expect(result.stdout).toMatch(/^SERVERFS_DEFAULT_LIST_LIMIT +100 +fallback$/m)
      expect(result.stdout).toMatch(/^SERVERFS_LOG_LEVEL +INFO +fallback$/m)
      expect(result.stdout).toMatch(/^SERVERFS_MAX_LIST_ENTRIES +200 +env$/m)
      expect(result.stdout).toMatch(/^SERVERFS_MAX_SEARCH_RESULTS +100 +default$/m)
      expect(result.stdout).toContain(
        "warning: SERVERFS_DEFAULT_LIST_LIMIT: not understood; the default 100 is used instead"
      )
      // The value that was not understood is not echoed.
      expect(result.stdout).not.toContain("lots")
    })
  )

  it.effect("warnings, not errors: zero workdirs, a workdir at /, running as root", () =>
    Effect.sync(() => {
      const none = run({})
      expect(none.status).toBe(0)
      expect(none.stdout).toContain("warning: no workdir is configured")
      expect(none.stdout.includes("warning: running as root (uid 0)")).toBe(asRoot)
      const root = run({ WORKDIR_01_ALIAS: "host", WORKDIR_01_PATH: "/" })
      expect(root.status).toBe(0)
      expect(root.stdout).toContain('warning: WORKDIR_01_PATH: workdir "host" is the filesystem root')
      expect(root.stdout).not.toContain("no workdir")
    })
  )

  it.effect("an unreadable SERVERFS_ENV_FILE is named with the reason (absent, a directory)", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const absent = run({ SERVERFS_ENV_FILE: `${tree.base}/absent.env` })
      expect(absent.status).toBe(2)
      expect(absent.stderr).toBe(
        "ServerFS: configuration error: SERVERFS_ENV_FILE: the named file does not exist\n"
      )
      expect(absent.stdout).toContain(`env file: ${tree.base}/absent.env`)
      const directory = `${tree.base}/env-dir`
      mkdirSync(directory, { recursive: true })
      const dir = run({ SERVERFS_ENV_FILE: directory })
      expect(dir.status).toBe(2)
      expect(dir.stderr).toBe(
        "ServerFS: configuration error: SERVERFS_ENV_FILE: the named file is a directory\n"
      )
    })
  )

  it.effect.skipIf(asRoot)(
    "an env file without read permission: permission denied (skipped as root: root reads any file)",
    () =>
      Effect.gen(function* () {
        const tree = yield* SharedTempTree
        const envFile = `${tree.base}/private.env`
        writeFileSync(envFile, "WORKDIR_01_ALIAS=docs\n")
        chmodSync(envFile, 0o000)
        const result = run({ SERVERFS_ENV_FILE: envFile })
        expect(result.status).toBe(2)
        expect(result.stderr).toBe(
          "ServerFS: configuration error: SERVERFS_ENV_FILE: the named file cannot be read: permission denied\n"
        )
      })
  )

  it.effect("--json: one document with stable keys, also on errors (exit 2)", () =>
    Effect.gen(function* () {
      const tree = yield* SharedTempTree
      const ok = run(
        { WORKDIR_01_ALIAS: "docs", WORKDIR_01_PATH: tree.root, SERVERFS_DEFAULT_LIST_LIMIT: "x" },
        "--json"
      )
      expect(ok.status).toBe(0)
      const doc = JSON.parse(ok.stdout)
      expect(Object.keys(doc)).toEqual([
        "ok",
        "envFile",
        "errors",
        "warnings",
        "settings",
        "workdirs",
        "unknownVariables",
        "runtimePaths"
      ])
      expect(doc.ok).toBe(true)
      expect(doc.envFile).toBeNull()
      // Only with the bridge enabled.
      expect(doc.runtimePaths).toEqual([])
      expect(doc.errors).toEqual([])
      expect(doc.workdirs).toEqual([
        { slot: "01", alias: "docs", readOnly: true, agentMode: "disabled", agentRuntimes: [] }
      ])
      for (const setting of doc.settings)
        expect(Object.keys(setting)).toEqual(["variable", "value", "source"])
      expect(doc.settings).toContainEqual({
        variable: "SERVERFS_DEFAULT_LIST_LIMIT",
        value: "100",
        source: "fallback"
      })
      expect(doc.settings).toContainEqual({
        variable: "SERVERFS_MAX_READ_LINES",
        value: "500",
        source: "default"
      })
      expect(doc.warnings).toContainEqual({
        variable: "SERVERFS_DEFAULT_LIST_LIMIT",
        message: "not understood; the default 100 is used instead"
      })
      expect(ok.stdout).not.toContain(tree.root)

      const bad = run(
        { WORKDIR_01_ALIAS: "docs", WORKDIR_01_PATH: tree.root, WORKDIR_01_READ_ONLY: "nah" },
        "--json"
      )
      expect(bad.status).toBe(2)
      const failed = JSON.parse(bad.stdout)
      expect(failed.ok).toBe(false)
      expect(failed.workdirs).toEqual([])
      expect(failed.errors).toEqual([
        {
          variable: "WORKDIR_01_READ_ONLY",
          message: "WORKDIR_01_READ_ONLY: expected one of true/false/1/0/yes/no/on/off"
        }
      ])
    })
  )

  it.effect(
    "bridge paths: with no path variable, each resolved path and where it came from (human and --json)",
    () =>
      Effect.gen(function* () {
        const tree = yield* SharedTempTree
        const home = `${tree.base}/home-a`
        const env = {
          WORKDIR_01_ALIAS: "docs",
          WORKDIR_01_PATH: tree.root,
          SERVERFS_AGENT_BRIDGE_ENABLED: "true",
          HOME: home
        }
        const human = run(env)
        expect(human.status).toBe(0)
        const share = `${home}/.local/share/serverfs-agent-bridge/runtime`
        expect(human.stdout).toContain(
          [
            "agent bridge paths (the same for serverfs-mcp and serverfs-bridge of this user):",
            `  socket: ${share}/socket/bridge.sock`,
            "    from: default under HOME (~/.local/share: XDG_DATA_HOME unset or relative)",
            `  lock directory: ${share}/locks`,
            "    from: default under HOME (~/.local/share: XDG_DATA_HOME unset or relative)",
            `  state directory: ${home}/.local/state/serverfs-agent-bridge`,
            "    from: default under HOME (~/.local/state: XDG_STATE_HOME unset or relative)"
          ].join("\n")
        )
        // The settings table shows the same values, as defaults.
        expect(human.stdout).toMatch(/^SERVERFS_AGENT_LOCK_DIR +\S+ +default$/m)

        const doc = JSON.parse(
          run(
            {
              ...env,
              XDG_DATA_HOME: `${tree.base}/data`,
              XDG_STATE_HOME: "relative/state",
              SERVERFS_AGENT_LOCK_DIR: "/run/serverfs-agent-locks"
            },
            "--json"
          ).stdout
        )
        expect(doc.ok).toBe(true)
        expect(doc.runtimePaths).toEqual([
          {
            variable: "SERVERFS_AGENT_BRIDGE_SOCKET",
            path: `${tree.base}/data/serverfs-agent-bridge/runtime/socket/bridge.sock`,
            origin: "XDG_DATA_HOME"
          },
          { variable: "SERVERFS_AGENT_LOCK_DIR", path: "/run/serverfs-agent-locks", origin: "system layout" },
          {
            variable: "SERVERFS_AGENT_BRIDGE_STATE_DIR",
            path: `${home}/.local/state/serverfs-agent-bridge`,
            origin: "HOME"
          }
        ])
        const set = JSON.parse(
          run({ ...env, SERVERFS_AGENT_BRIDGE_STATE_DIR: `${tree.base}/state` }, "--json").stdout
        )
        expect(set.runtimePaths[2]).toEqual({
          variable: "SERVERFS_AGENT_BRIDGE_STATE_DIR",
          path: `${tree.base}/state`,
          origin: "variable"
        })
      })
  )

  it.effect(
    "bridge paths: no HOME and no XDG variable → every missing default is an error naming what to set",
    () =>
      Effect.gen(function* () {
        const tree = yield* SharedTempTree
        const result = run({
          WORKDIR_01_ALIAS: "docs",
          WORKDIR_01_PATH: tree.root,
          SERVERFS_AGENT_BRIDGE_ENABLED: "true"
        })
        expect(result.status).toBe(2)
        expect(result.stderr).toBe(
          [
            "ServerFS: configuration error: SERVERFS_AGENT_LOCK_DIR: has no default: neither XDG_DATA_HOME nor HOME is set to an absolute path; set SERVERFS_AGENT_LOCK_DIR (or XDG_DATA_HOME, or HOME)",
            "ServerFS: configuration error: SERVERFS_AGENT_BRIDGE_SOCKET: has no default: neither XDG_DATA_HOME nor HOME is set to an absolute path; set SERVERFS_AGENT_BRIDGE_SOCKET (or XDG_DATA_HOME, or HOME)",
            "ServerFS: configuration error: SERVERFS_AGENT_BRIDGE_STATE_DIR: has no default: neither XDG_STATE_HOME nor HOME is set to an absolute path; set SERVERFS_AGENT_BRIDGE_STATE_DIR (or XDG_STATE_HOME, or HOME)",
            ""
          ].join("\n")
        )
        expect(result.stdout).not.toContain("agent bridge paths")
      })
  )
})
