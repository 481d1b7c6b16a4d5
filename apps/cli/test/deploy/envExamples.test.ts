import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { parseEnvFileAll, unknownVariableNames } from "@serverfs/policy"
import { cliMain } from "@serverfs/testkit"
import { envExamples } from "./DeployFiles.js"

/**
 * The example environment files in docs/deploy name only variables ServerFS reads, parse under
 * ServerFS's strict .env grammar (so systemd's EnvironmentFile= and ServerFS read them alike), and
 * the shared one is a configuration `serverfs config check` accepts once its paths exist.
 */

/**
 * The HTTP listener's variables, fixed by the issue-9 contract and declared by the HTTP slice's
 * settings table. Until that table is merged they are not "known" here; once it is, this
 * allowance admits nothing (every name in it is then known) and may be deleted.
 */
const HTTP_CONTRACT = new Set([
  "SERVERFS_MCP_TRANSPORT",
  "SERVERFS_HTTP_HOST",
  "SERVERFS_HTTP_PORT",
  "SERVERFS_HTTP_ALLOWED_HOSTS",
  "SERVERFS_HTTP_ALLOWED_ORIGINS",
  "SERVERFS_HTTP_TOKEN_FILE",
  "SERVERFS_HTTP_AUTHENTICATING_PROXY"
])

const scratch = mkdtempSync(path.join(tmpdir(), "serverfs-env-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const parse = (file: string) => parseEnvFileAll(readFileSync(file))

/** Names on commented-out example lines (`# NAME=value`): documented options, checked as well. */
const commentedNames = (file: string): ReadonlyArray<string> =>
  readFileSync(file, "utf8")
    .split("\n")
    .flatMap((line) => /^#\s?([A-Z][A-Z0-9_]*)=/.exec(line)?.[1] ?? [])

describe("example environment files (docs/deploy)", () => {
  for (const [name, file] of Object.entries(envExamples)) {
    it(`${name}: parses under the strict grammar, names only variables ServerFS reads`, () => {
      const { entries, problems } = parse(file)
      expect(problems).toEqual([])
      expect(entries.size).toBeGreaterThan(0)
      const names = [...entries.keys(), ...commentedNames(file)]
      expect(unknownVariableNames(names).filter((n) => !HTTP_CONTRACT.has(n))).toEqual([])
      // Values systemd and ServerFS would read differently: quotes, "~", "$" expansions, %-specifiers.
      for (const value of entries.values()) expect(value).not.toMatch(/^~|[$%'"]/)
    })
  }

  it("the HTTP example binds loopback on the default port and leaves the transport to the unit", () => {
    const { entries } = parse(envExamples.http)
    expect(entries.get("SERVERFS_HTTP_HOST")).toBe("127.0.0.1")
    expect(entries.get("SERVERFS_HTTP_PORT")).toBe("8765")
    expect(entries.has("SERVERFS_MCP_TRANSPORT")).toBe(false) // the unit sets it
  })

  it("the shared example is a valid configuration (paths made real): serverfs config check exits 0", () => {
    const home = path.join(scratch, "home")
    for (const dir of ["docs", "serverfs-scratch"]) mkdirSync(path.join(home, dir), { recursive: true })
    const envFile = path.join(scratch, "serverfs.env")
    writeFileSync(envFile, readFileSync(envExamples.shared, "utf8").replaceAll("/home/alice", home))
    const result = spawnSync(process.execPath, [cliMain, "config", "check"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SERVERFS_ENV_FILE: envFile },
      encoding: "utf8",
      timeout: 30_000
    })
    expect(result.stderr).not.toContain("does not read")
    expect(result.stdout).toContain("configuration ok: 2 workdir(s), 1 read-write")
    expect(result.status).toBe(0)
  })
})
