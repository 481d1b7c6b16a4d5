import { spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { expect, layer } from "@effect/vitest"
import { cliMain, SharedTempTree } from "@serverfs/testkit"
import { Effect } from "effect"

/** `serverfs config check` validates exactly what serverfs-mcp would, without printing host paths. */

const run = (env: Record<string, string>) =>
  spawnSync(process.execPath, [cliMain, "config", "check"], {
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
        expect(result.stdout).not.toContain("1000")
        // A clean configuration has no warning line.
        expect(run({ WORKDIR_01_ALIAS: "docs", WORKDIR_01_PATH: tree.root }).stdout).not.toContain("warning")
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
      expect(result.stdout).toBe("")
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
})
