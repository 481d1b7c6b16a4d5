import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import { describe, expect, it } from "@effect/vitest"
import { bridgeMain, cliMain, mcpMain } from "@serverfs/testkit"
import { Effect } from "effect"

/**
 * The command line of the three programs, on the real binaries: --help and --version print and
 * exit 0 without reading the configuration (a broken one is in the environment of every case);
 * any other argument is refused. The servers take no arguments, so a stray one exits 2 (a usage
 * mistake is a configuration mistake); the operator CLI refuses unknown input with exit 1.
 */
const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }

/** A configuration the servers would refuse: a program that reads it exits 2 with its line. */
const BROKEN = {
  WORKDIR_01_ALIAS: "docs",
  WORKDIR_01_PATH: "/nonexistent-serverfs",
  WORKDIR_01_READ_ONLY: "nah"
}

const run = (main: string, ...args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, [main, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin", ...BROKEN },
    input: "",
    encoding: "utf8",
    timeout: 30_000
  })

describe("program arguments", () => {
  for (const [name, main] of [
    ["serverfs-mcp", mcpMain],
    ["serverfs-bridge", bridgeMain]
  ] as const) {
    it.effect(`${name} --help / -h: usage on stdout, exit 0, configuration never read`, () =>
      Effect.sync(() => {
        for (const flag of ["--help", "-h"]) {
          const result = run(main, flag)
          expect(result.status).toBe(0)
          expect(result.stdout.startsWith(`Usage: ${name} [--help | --version]\n`)).toBe(true)
          expect(result.stdout).toContain("SERVERFS_ENV_FILE")
          expect(result.stderr).toBe("")
        }
      })
    )

    it.effect(`${name} --version / -V: name and version, exit 0`, () =>
      Effect.sync(() => {
        for (const flag of ["--version", "-V"]) {
          const result = run(main, flag)
          expect(result.status).toBe(0)
          expect(result.stdout).toBe(`${name} ${version}\n`)
          expect(result.stderr).toBe("")
        }
      })
    )
  }

  it.effect("serverfs-mcp /srv/docs: refused with one line naming the argument, exit 2, nothing served", () =>
    Effect.sync(() => {
      const result = run(mcpMain, "/srv/docs")
      expect(result.status).toBe(2)
      expect(result.stdout).toBe("")
      expect(result.stderr).toBe(
        'serverfs-mcp: unknown argument "/srv/docs": it takes no arguments (configuration comes from the environment); see serverfs-mcp --help\n'
      )
      // An unknown argument wins over --help: the mistake is named either way.
      expect(run(mcpMain, "--help", "--verbose").status).toBe(2)
    })
  )

  it.effect("serverfs-bridge --foreground: refused, exit 2; a control character is not echoed", () =>
    Effect.sync(() => {
      const result = run(bridgeMain, "--foreground")
      expect(result.status).toBe(2)
      expect(result.stderr).toBe(
        'serverfs-bridge: unknown argument "--foreground": it takes no arguments (configuration comes from the environment); see serverfs-bridge --help\n'
      )
      expect(run(bridgeMain, "a\u001b[2Jb").stderr).toContain('unknown argument "a?[2Jb"')
    })
  )

  it.effect("serverfs: --help and --version work on a broken configuration; unknown input is refused", () =>
    Effect.sync(() => {
      const help = run(cliMain, "--help")
      expect(help.status).toBe(0)
      expect(help.stdout).toContain("config")
      const ver = run(cliMain, "--version")
      expect(ver.status).toBe(0)
      expect(ver.stdout).toContain(version)
      for (const args of [
        ["bogus"],
        ["--bogus"],
        ["config", "check", "--nope"],
        ["config", "check", "extra"]
      ]) {
        const refused = run(cliMain, ...args)
        expect(refused.status).toBe(1)
        expect(refused.stdout + refused.stderr).toMatch(
          /unknown argument|Invalid subcommand|Received unknown/i
        )
      }
    })
  )
})
