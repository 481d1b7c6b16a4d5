/**
 * The binary tools through the real `serverfs-mcp` process over stdio, as a chat client sees
 * them (tool-contracts §1, §2.12–§2.13, §7): registered only when a workdir enables binary
 * transfer, the reference annotations, a PNG downloaded as one EmbeddedResource whose blob
 * round-trips to the same sha256 through upload_binary_file, the audit fields (never the
 * payload), and the response budget measured on what a download really sends.
 */
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { DownloadBinaryFileOutput, UploadBinaryFileOutput } from "@serverfs/domain"
import {
  errorCodeOf,
  type McpProcess,
  makeTempTree,
  startMcp,
  type TempTree,
  textOf
} from "@serverfs/testkit"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const lockHolder = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "mutations",
  "fixtures",
  "lock-holder.mjs"
)

let tree: TempTree
let mcp: McpProcess
let plainDir = ""

const PNG = Buffer.concat([
  Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"),
  Buffer.from("PAYLOAD-MARKER-2b7e15"),
  Buffer.alloc(64 * 1024, 0xa5)
])
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

beforeAll(async () => {
  tree = makeTempTree("serverfs-bin-stdio-")
  plainDir = path.join(tree.base, "plain")
  fs.mkdirSync(plainDir)
  fs.mkdirSync(path.join(tree.root, "img"))
  fs.writeFileSync(path.join(tree.root, "img", "a b.png"), PNG)
  fs.writeFileSync(path.join(tree.root, "big.bin"), Buffer.alloc(120 * 1024, 1))
  mcp = await startMcp({
    WORKDIR_01_ALIAS: "rw",
    WORKDIR_01_PATH: tree.root,
    WORKDIR_01_READ_ONLY: "false",
    WORKDIR_01_BINARY_TRANSFER_ENABLED: "true",
    WORKDIR_02_ALIAS: "plain",
    WORKDIR_02_PATH: plainDir,
    // 128 KiB budget: the 64 KiB PNG's base64 (~87 KiB) fits, the 120 KiB file's (160 KiB) does not.
    SERVERFS_MAX_RESPONSE_BYTES: String(128 * 1024)
  })
  await mcp.client.listTools()
})

afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

const call = (name: string, args: Record<string, unknown>, on: McpProcess = mcp) =>
  on.client.callTool({ name, arguments: args })

describe("binary transfer over stdio", () => {
  it("both tools are listed with the reference annotations, no openai/fileParams while ingress is off", async () => {
    const { tools } = await mcp.client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    // The eleven read and mutation tools, server_info and the two binary tools.
    expect(tools.length).toBe(14)
    const info = await mcp.client.callTool({ name: "server_info", arguments: {} })
    expect(
      (info.structuredContent as { catalog: { counts: Record<string, number> } }).catalog.counts
    ).toEqual({
      read: 6,
      mutation: 5,
      binary: 2,
      agent: 0,
      server: 1
    })
    expect(byName.get("download_binary_file")?.annotations).toEqual({
      readOnlyHint: true,
      openWorldHint: false
    })
    expect(byName.get("upload_binary_file")?.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false
    })
    expect(byName.get("upload_binary_file")?._meta).toBeUndefined()
    const workdirs = (await call("list_workdirs", {})).structuredContent as {
      workdirs: ReadonlyArray<{ alias: string; binary_transfer: boolean }>
    }
    expect(workdirs.workdirs.map((w) => [w.alias, w.binary_transfer])).toEqual([
      ["rw", true],
      ["plain", false]
    ])
  })

  it("download a PNG → one EmbeddedResource blob; upload it back → the same sha256", async () => {
    const result = await call("download_binary_file", { workdir: "rw", path: "img/a b.png" })
    expect(result.isError ?? false, JSON.stringify(result).slice(0, 300)).toBe(false)
    const content = result.content as ReadonlyArray<{
      type: string
      resource: { uri: string; mimeType: string; blob: string }
    }>
    expect(content.length).toBe(1)
    expect(content[0]?.type).toBe("resource")
    expect(content[0]?.resource.uri).toBe("serverfs://rw/img/a%20b.png")
    expect(content[0]?.resource.mimeType).toBe("image/png")
    const meta = Schema.decodeUnknownSync(DownloadBinaryFileOutput)(result.structuredContent, {
      onExcessProperty: "error"
    })
    expect(meta).toMatchObject({ size: PNG.length, mime_type: "image/png", sha256: sha(PNG) })
    const blob = content[0]?.resource.blob ?? ""
    expect(sha(Buffer.from(blob, "base64"))).toBe(sha(PNG))

    const uploaded = await call("upload_binary_file", {
      workdir: "rw",
      path: "img/copy.png",
      data_base64: blob
    })
    const out = Schema.decodeUnknownSync(UploadBinaryFileOutput)(uploaded.structuredContent, {
      onExcessProperty: "error"
    })
    expect([out.created, out.replaced, out.bytes_written, out.sha256]).toEqual([
      true,
      false,
      PNG.length,
      sha(PNG)
    ])
    expect(sha(fs.readFileSync(path.join(tree.root, "img", "copy.png")))).toBe(sha(PNG))

    // The audit line of a call follows its response (the stderr sink writes after the turn):
    // wait for the upload's own line, the last of the three.
    const records = await mcp.auditWhen((r) =>
      r.some((x) => x.tool === "upload_binary_file" && x.success === true)
    )
    const down = records.find((r) => r.tool === "download_binary_file" && r.success === true)
    expect(down).toMatchObject({
      bytes_returned: PNG.length,
      mime_type: "image/png",
      revision: meta.revision
    })
    const up = records.find((r) => r.tool === "upload_binary_file" && r.success === true)
    expect(up).toMatchObject({ bytes_written: PNG.length, revision: out.revision })
    // Never the payload, in either direction.
    expect(mcp.stderrLines().join("\n")).not.toContain("PAYLOAD-MARKER")
    expect(mcp.stderrLines().join("\n")).not.toContain(blob.slice(0, 64))
  })

  it("a blob over the response budget → RESPONSE_TOO_LARGE; bad base64 → INVALID_BASE64; no binary → BINARY_TRANSFER_DISABLED", async () => {
    const big = await call("download_binary_file", { workdir: "rw", path: "big.bin" })
    expect(big.isError).toBe(true)
    expect(errorCodeOf(textOf(big))).toBe("RESPONSE_TOO_LARGE")
    const bad = await call("upload_binary_file", { workdir: "rw", path: "x.bin", data_base64: "Y Q==" })
    expect(textOf(bad)).toBe(
      'INVALID_BASE64: rw:x.bin — data_base64 is not strict RFC 4648 base64 (A-Z a-z 0-9 + /, "=" padding to a multiple of 4, no whitespace)'
    )
    const off = await call("download_binary_file", { workdir: "plain", path: "x" })
    expect(textOf(off)).toBe("BINARY_TRANSFER_DISABLED: binary transfer is disabled for 'plain'")
    const extra = await call("upload_binary_file", {
      workdir: "rw",
      path: "x.bin",
      file: { download_url: "https://a/b", file_id: "f", extra: 1 }
    })
    expect(errorCodeOf(textOf(extra))).toBe("INVALID_ARGUMENT")
    expect(fs.existsSync(path.join(tree.root, "x.bin"))).toBe(false)
  })

  it("without any binary workdir the two tools are not registered, and the catalog marker differs", async () => {
    const other = await startMcp({ WORKDIR_01_ALIAS: "plain", WORKDIR_01_PATH: plainDir })
    try {
      const { tools } = await other.client.listTools()
      expect(tools.length).toBe(12)
      expect(tools.map((t) => t.name)).not.toContain("download_binary_file")
      const markerOf = async (client: typeof other.client) =>
        (
          (await client.callTool({ name: "server_info", arguments: {} })).structuredContent as {
            catalog: { marker: string }
          }
        ).catalog.marker
      expect(await markerOf(other.client)).not.toBe(await markerOf(mcp.client))
    } finally {
      await other.close()
    }
  })

  it("while another process holds the workdir's lease → upload WORKDIR_BUSY, nothing written; download still reads", async () => {
    const locks = path.join(tree.base, "locks")
    fs.mkdirSync(path.join(locks, "active"), { recursive: true })
    const lockFile = path.join(locks, "01.lock")
    fs.writeFileSync(lockFile, "")
    const leased = fs.mkdtempSync(path.join(tree.base, "leased-"))
    fs.writeFileSync(path.join(leased, "a.png"), PNG)
    const server = await startMcp({
      WORKDIR_01_ALIAS: "rw",
      WORKDIR_01_PATH: leased,
      WORKDIR_01_READ_ONLY: "false",
      WORKDIR_01_BINARY_TRANSFER_ENABLED: "true",
      SERVERFS_AGENT_BRIDGE_ENABLED: "true",
      SERVERFS_AGENT_LOCK_DIR: locks,
      // Set explicitly: the test environment has no HOME for the user-scoped default.
      SERVERFS_AGENT_BRIDGE_SOCKET: `${locks}.sock`
    })
    const holder = spawn(process.execPath, [lockHolder, lockFile], { stdio: ["pipe", "pipe", "inherit"] })
    try {
      await new Promise<void>((resolve, reject) => {
        let out = ""
        holder.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString("utf8")
          if (out.includes("locked\n")) resolve()
          if (out.includes("busy\n")) reject(new Error("lock already held"))
        })
        holder.once("exit", (code) => reject(new Error(`lock holder exited early (${String(code)})`)))
      })
      const before = fs.readdirSync(leased)
      const busy = await call(
        "upload_binary_file",
        { workdir: "rw", path: "new.png", data_base64: PNG.toString("base64") },
        server
      )
      expect(textOf(busy)).toBe("WORKDIR_BUSY: rw has an active Agent writer")
      expect(fs.readdirSync(leased)).toEqual(before)
      const read = await call("download_binary_file", { workdir: "rw", path: "a.png" }, server)
      expect(read.isError ?? false).toBe(false)
    } finally {
      holder.stdin?.end()
      await new Promise<void>((resolve) =>
        holder.exitCode !== null ? resolve() : holder.once("exit", () => resolve())
      )
      await server.close()
    }
  })
})
