/**
 * The scripted runtime's `write:` through the bridge (issue 14, item 11): the bridge, holding
 * the task's lease, runs the workspace's create/edit transactions for it, so every check an MCP
 * create_text_file / edit_text_file makes applies — deny, hidden and reserved names, hard
 * links, symlinks, read-only — and a review task never writes. In this process, through the real
 * RPC server and client, with the real scripted runtime.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { makeScriptedAdapter } from "@serverfs/adapters"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, makeSandbox, type Sandbox, submitParams, TERMINAL, waitForStatus } from "./support/daemon.js"
import { type InProcessServer, serveInProcess } from "./support/inProcess.js"

let sandbox: Sandbox
let server: InProcessServer

beforeAll(async () => {
  sandbox = makeSandbox([
    { slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" },
    { slot: 2, alias: "ro", mode: "review", runtimes: "fake", readOnly: true }
  ])
  const w1 = sandbox.workdir("w1")
  fs.mkdirSync(path.join(w1, "docs"))
  fs.writeFileSync(path.join(w1, "existing.txt"), "before\n")
  fs.writeFileSync(path.join(w1, "linked.txt"), "linked\n")
  fs.linkSync(path.join(w1, "linked.txt"), path.join(w1, "other-name.txt"))
  fs.writeFileSync(path.join(sandbox.workdir("ro"), "kept.txt"), "kept\n")
  fs.mkdirSync(path.dirname(sandbox.socketPath), { recursive: true, mode: 0o700 })
  server = await serveInProcess(sandbox.env(), sandbox.socketPath, [Effect.runSync(makeScriptedAdapter())])
}, 60_000)

afterAll(async () => {
  await server?.close()
  sandbox?.remove()
})

const run = async (prompt: string, options: { workdir?: string; profile?: string; path?: string } = {}) => {
  const { task_id } = await call(
    server.client,
    "task.submit",
    submitParams({ prompt, profile: "workspace-write", ...options }, "w1")
  )
  return waitForStatus(server.client, task_id, TERMINAL)
}

/** The names and contents of a workdir (one level), to show a refusal changed nothing. */
const contents = (alias: string) =>
  Object.fromEntries(
    fs
      .readdirSync(sandbox.workdir(alias), { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => [e.name, fs.readFileSync(path.join(sandbox.workdir(alias), e.name), "utf8")])
  )

describe("scripted write: the workspace's checks, as the lease holder", () => {
  it("a normal write creates the file below the task's directory; a second one replaces it", async () => {
    const created = await run("write:made.txt=hello\ncomplete:ok", { path: "docs" })
    expect(created.status).toBe("succeeded")
    expect(fs.readFileSync(path.join(sandbox.workdir("w1"), "docs", "made.txt"), "utf8")).toBe("hello")
    const replaced = await run("write:existing.txt=after\ncomplete:ok")
    expect(replaced.status).toBe("succeeded")
    expect(fs.readFileSync(path.join(sandbox.workdir("w1"), "existing.txt"), "utf8")).toBe("after")
  })

  const refusals: ReadonlyArray<readonly [string, string]> = [
    ["a denied name", "DENIED_PATH"],
    ["a hidden name", "HIDDEN_PATH_NOT_ALLOWED"],
    ["a reserved name", "RESERVED_PATH"],
    ["a hard-linked file", "MULTIPLE_HARDLINKS_NOT_SUPPORTED"]
  ]
  const targets: Readonly<Record<string, string>> = {
    "a denied name": "server.pem",
    "a hidden name": ".hidden.txt",
    "a reserved name": ".serverfs-tmp-0123456789abcdef",
    "a hard-linked file": "other-name.txt"
  }
  for (const [what, code] of refusals) {
    it(`a write to ${what} → the task fails (AGENT_PROVIDER_ERROR, ${code}); nothing changes`, async () => {
      const before = contents("w1")
      const done = await run(`write:${targets[what]}=overwritten\ncomplete:wrote`)
      expect(done.status).toBe("failed")
      expect(done.error_code).toBe("AGENT_PROVIDER_ERROR")
      expect(done.error_message).toContain(`scripted write refused: ${code}:`)
      expect(done.error_message).not.toContain(sandbox.base)
      expect(contents("w1")).toEqual(before)
    })
  }

  it("a review task never writes, in a read-write workdir", async () => {
    const before = contents("w1")
    const done = await run("write:review.txt=x\ncomplete:wrote", { profile: "review" })
    expect(done.status).toBe("failed")
    expect(done.error_message).toBe("scripted write refused: a review task does not write files")
    expect(contents("w1")).toEqual(before)
  })

  it("a read-only workdir is never written (only review tasks run there)", async () => {
    const done = await run("write:kept.txt=changed\ncomplete:wrote", { workdir: "ro", profile: "review" })
    expect(done.status).toBe("failed")
    expect(done.error_code).toBe("AGENT_PROVIDER_ERROR")
    expect(contents("ro")).toEqual({ "kept.txt": "kept\n" })
  })
})
