import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  allowedHostsFor,
  checkHttpSettings,
  inspectConfiguration,
  isLoopbackHost,
  maxBodyBytesFor,
  maxBodyMemoryBytesFor,
  readTokenFile,
  requiredBodyBytes
} from "../src/index.js"

/** The SERVERFS_HTTP_* table: defaults, the fail-closed rules, the token file and config check. */
const GLOBAL = { maxWriteBytes: 1_048_576, maxBinaryTransferBytes: 8_388_608, binaryTransferEnabled: true }
const check = (vars: Record<string, string>) => checkHttpSettings((v) => vars[v], GLOBAL)
const problemVariables = (vars: Record<string, string>) => check(vars).problems.map((p) => p.variable)

describe("HttpSettings", () => {
  it("defaults to stdio on 127.0.0.1:8765 with the loopback Host values", () => {
    const { settings, problems } = check({})
    expect(problems).toEqual([])
    expect(settings.transport).toBe("stdio")
    expect(allowedHostsFor(settings, 8765)).toEqual(["127.0.0.1:8765", "localhost:8765", "[::1]:8765"])
    expect(isLoopbackHost("127.0.0.2")).toBe(true)
    expect(isLoopbackHost("0.0.0.0")).toBe(false)
  })

  it("derives a body limit that admits the largest upload and write", () => {
    const { settings } = check({})
    expect(maxBodyBytesFor(settings, GLOBAL)).toBeGreaterThanOrEqual(requiredBodyBytes(GLOBAL))
    expect(requiredBodyBytes(GLOBAL)).toBeGreaterThan(Math.ceil(8_388_608 / 3) * 4)
    expect(
      problemVariables({ SERVERFS_MCP_TRANSPORT: "http", SERVERFS_HTTP_MAX_BODY_BYTES: "1048576" })
    ).toEqual(["SERVERFS_HTTP_MAX_BODY_BYTES"])
  })

  it("bounds all bodies at once: four bodies by default, never below one body", () => {
    const { settings } = check({})
    expect(maxBodyMemoryBytesFor(settings, GLOBAL)).toBe(4 * maxBodyBytesFor(settings, GLOBAL))
    const body = maxBodyBytesFor(settings, GLOBAL)
    const http = { SERVERFS_MCP_TRANSPORT: "http" }
    expect(problemVariables({ ...http, SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES: String(body - 1) })).toEqual([
      "SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES"
    ])
    expect(problemVariables({ ...http, SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES: String(body) })).toEqual([])
    expect(problemVariables({ ...http, SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES: "lots" })).toEqual([
      "SERVERFS_HTTP_MAX_BODY_MEMORY_BYTES"
    ])
  })

  it("refuses a non-loopback bind without a Host list, and without a token unless a proxy is declared", () => {
    const open = { SERVERFS_MCP_TRANSPORT: "http", SERVERFS_HTTP_HOST: "0.0.0.0" }
    expect(problemVariables(open)).toEqual(["SERVERFS_HTTP_ALLOWED_HOSTS", "SERVERFS_HTTP_TOKEN_FILE"])
    const listed = { ...open, SERVERFS_HTTP_ALLOWED_HOSTS: "mcp.example.com" }
    expect(problemVariables(listed)).toEqual(["SERVERFS_HTTP_TOKEN_FILE"])
    expect(problemVariables({ ...listed, SERVERFS_HTTP_AUTHENTICATING_PROXY: "true" })).toEqual([])
    // stdio ignores the HTTP rules (one .env file may serve both).
    expect(problemVariables({ SERVERFS_HTTP_HOST: "0.0.0.0" })).toEqual([])
  })

  it("refuses wildcards and malformed entries without echoing them", () => {
    const bad = check({
      SERVERFS_HTTP_ALLOWED_HOSTS: "*",
      SERVERFS_HTTP_ALLOWED_ORIGINS: "https://a.example/path",
      SERVERFS_HTTP_PORT: "-1",
      SERVERFS_MCP_TRANSPORT: "sse"
    })
    expect(bad.problems.map((p) => p.variable).sort()).toEqual([
      "SERVERFS_HTTP_ALLOWED_HOSTS",
      "SERVERFS_HTTP_ALLOWED_ORIGINS",
      "SERVERFS_HTTP_PORT",
      "SERVERFS_MCP_TRANSPORT"
    ])
    expect(bad.problems.map((p) => p.problem).join(" ")).not.toContain("a.example")
  })

  it("reads a private token file and refuses a loose, short or non-ASCII one", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-token-"))
    try {
      const file = path.join(dir, "token")
      const write = (text: string, mode: number) => {
        fs.rmSync(file, { force: true })
        fs.writeFileSync(file, text, { mode })
        fs.chmodSync(file, mode)
      }
      write("abcdefghijklmnopqrstuvwxyz\n", 0o600)
      expect(Either.getOrUndefined(readTokenFile(file))).toBe("abcdefghijklmnopqrstuvwxyz")
      for (const [text, mode] of [
        ["abcdefghijklmnopqrstuvwxyz", 0o644],
        ["tiny12", 0o600],
        ["abcdefgh ijklmnopqrstuvwxyz", 0o600],
        ["", 0o600]
      ] as const) {
        write(text, mode)
        const read = readTokenFile(file)
        expect(read._tag).toBe("Left")
        if (text !== "") expect(JSON.stringify(read)).not.toContain(text)
      }
      fs.symlinkSync(file, path.join(dir, "link"))
      expect(readTokenFile(path.join(dir, "link"))._tag).toBe("Left")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("is listed by config check when the transport is http", () => {
    const report = inspectConfiguration({ SERVERFS_MCP_TRANSPORT: "http" }, { uid: 1000 })
    const names = report.settings.map((s) => s.variable)
    expect(names).toContain("SERVERFS_HTTP_PORT")
    expect(names).toContain("SERVERFS_HTTP_MAX_SESSIONS")
    expect(report.unknownVariables).toEqual([])
    const stdio = inspectConfiguration({}, { uid: 1000 })
    expect(stdio.settings.map((s) => s.variable)).toContain("SERVERFS_MCP_TRANSPORT")
    expect(stdio.settings.map((s) => s.variable)).not.toContain("SERVERFS_HTTP_PORT")
  })
})
