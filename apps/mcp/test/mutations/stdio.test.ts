/**
 * The write plane through the real `serverfs-mcp` process over stdio, as a chat client sees it:
 * the eleven tools (and server_info) with the reference annotations (tool-contracts §1), structured outputs the
 * SDK client validates against each advertised outputSchema, the read-only gate on all five
 * mutation tools, the audit counters of §7 on stderr — and never the content, old_text or
 * new_text — and the Agent Bridge lease (WORKDIR_BUSY) held by another process.
 */
import { type ChildProcess, spawn } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import {
  CreateDirectoryOutput,
  CreateTextFileOutput,
  DeleteDirectoryOutput,
  DeleteFileOutput,
  EditTextFileOutput
} from "@serverfs/domain"
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

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures")

let tree: TempTree
let mcp: McpProcess
let roDir = ""

const MARKERS = {
  content: "CONTENT-MARKER-7f3a9c",
  oldText: "OLDTEXT-MARKER-91b2e4",
  newText: "NEWTEXT-MARKER-c4d805",
  absent: "ABSENT-MARKER-55e1aa",
  binary: "BINARY-MARKER-0d0d0d"
}

beforeAll(async () => {
  tree = makeTempTree("serverfs-mut-stdio-")
  roDir = path.join(tree.base, "ro")
  fs.mkdirSync(roDir)
  fs.writeFileSync(path.join(roDir, "x.txt"), "read only a\n")
  fs.mkdirSync(path.join(roDir, "d"))
  mcp = await startMcp({
    WORKDIR_01_ALIAS: "rw",
    WORKDIR_01_PATH: tree.root,
    WORKDIR_01_READ_ONLY: "false",
    WORKDIR_02_ALIAS: "ro",
    WORKDIR_02_PATH: roDir
  })
  // Caches the output validators: from here on the SDK client checks every structuredContent.
  await mcp.client.listTools()
})

afterAll(async () => {
  await mcp?.close()
  tree?.remove()
})

type Result = Awaited<ReturnType<McpProcess["client"]["callTool"]>>

const call = (name: string, args: Record<string, unknown>, on: McpProcess = mcp) =>
  on.client.callTool({ name, arguments: args })

/** A success's structuredContent, checked again against the domain schema (no extra fields). */
const ok = <A, I>(result: Result, schema: Schema.Schema<A, I>): A => {
  expect(result.isError ?? false, textOf(result)).toBe(false)
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent)
  return Schema.decodeUnknownSync(schema)(result.structuredContent, { onExcessProperty: "error" })
}

const failed = (result: Result, text: string) => {
  expect(result.isError).toBe(true)
  expect(textOf(result)).toBe(text)
  expect(errorCodeOf(textOf(result))).toBe(text.slice(0, text.indexOf(":")))
  expect(result.structuredContent).toBeUndefined()
}

const statRevision = async (workdir: string, p: string, on: McpProcess = mcp) => {
  const result = await call("stat_file", { workdir, path: p }, on)
  return (result.structuredContent as { revision: string }).revision
}

const MUTATION_ANNOTATIONS = {
  create_text_file: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false
  },
  create_directory: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false
  },
  edit_text_file: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete_file: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete_directory: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
}
const READ_TOOLS = [
  "list_workdirs",
  "list_directory",
  "find_files",
  "search_text",
  "read_text_file",
  "stat_file"
]
/** Beyond the reference, read-only like the read tools (docs/tools.md#server_info). */
const SERVER_INFO = "server_info"

describe("the mutation surface over stdio", () => {
  it("tools/list: exactly the eleven tools and server_info, with the reference annotations and both schemas", async () => {
    const { tools } = await mcp.client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(
      [...READ_TOOLS, ...Object.keys(MUTATION_ANNOTATIONS), SERVER_INFO].sort()
    )
    for (const tool of tools) {
      const expected =
        MUTATION_ANNOTATIONS[tool.name as keyof typeof MUTATION_ANNOTATIONS] ??
        ({ readOnlyHint: true, openWorldHint: false } as const)
      expect({ name: tool.name, annotations: tool.annotations }).toEqual({
        name: tool.name,
        annotations: expected
      })
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type).toBe("object")
    }
    const edit = tools.find((t) => t.name === "edit_text_file")
    expect(edit?.inputSchema.required).toEqual(
      expect.arrayContaining(["workdir", "path", "expected_revision", "edits"])
    )
    const edits = edit?.inputSchema.properties?.edits as { minItems?: number } | undefined
    expect(edits?.minItems).toBe(1)
    // The SDK client holds a validator for each mutation tool's outputSchema (it validates every
    // structuredContent it receives for them).
    const client = mcp.client as unknown as { getToolOutputValidator: (name: string) => unknown }
    for (const name of Object.keys(MUTATION_ANNOTATIONS))
      expect(client.getToolOutputValidator(name)).toBeDefined()
  })

  it("a read-only workdir answers WORKDIR_READ_ONLY on all five, whatever the path", async () => {
    const revision = await statRevision("ro", "x.txt")
    const before = fs.readdirSync(roDir).sort()
    for (const p of ["x.txt", "d", "new.txt", ".env", "", "../x"]) {
      const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
        ["create_text_file", { workdir: "ro", path: p, content: "x" }],
        [
          "edit_text_file",
          { workdir: "ro", path: p, expected_revision: revision, edits: [{ old_text: "a", new_text: "b" }] }
        ],
        ["delete_file", { workdir: "ro", path: p, expected_revision: revision }],
        ["create_directory", { workdir: "ro", path: p }],
        ["delete_directory", { workdir: "ro", path: p, expected_revision: revision }]
      ]
      for (const [name, args] of calls) failed(await call(name, args), "WORKDIR_READ_ONLY: 'ro' is read-only")
    }
    expect(fs.readdirSync(roDir).sort()).toEqual(before)
    expect(fs.readFileSync(path.join(roDir, "x.txt"), "utf8")).toBe("read only a\n")
  })

  it("create → edit → delete and mkdir → rmdir: outputs match their schemas, revisions chain", async () => {
    const content = `first ${MARKERS.content}\r\nsecond ${MARKERS.oldText}\nno final newline`
    const made = ok(
      await call("create_text_file", { workdir: "rw", path: "seq/../doc.txt", content }),
      CreateTextFileOutput
    )
    expect(made).toEqual({
      workdir: "rw",
      path: "seq/../doc.txt",
      created: true,
      bytes_written: Buffer.byteLength(content),
      revision: await statRevision("rw", "doc.txt")
    })
    expect(fs.readFileSync(path.join(tree.root, "doc.txt"), "utf8")).toBe(content)

    const edited = ok(
      await call("edit_text_file", {
        workdir: "rw",
        path: "doc.txt",
        expected_revision: made.revision,
        edits: [
          { old_text: MARKERS.oldText, new_text: MARKERS.newText },
          { old_text: "first", new_text: "1st" }
        ]
      }),
      EditTextFileOutput
    )
    expect(edited.edits_applied).toBe(2)
    expect(edited.revision_before).toBe(made.revision)
    expect(edited.revision).toBe(await statRevision("rw", "doc.txt"))
    const after = content.replace(MARKERS.oldText, MARKERS.newText).replace("first", "1st")
    expect(fs.readFileSync(path.join(tree.root, "doc.txt"), "utf8")).toBe(after)
    expect(edited.bytes_after).toBe(Buffer.byteLength(after))

    failed(
      await call("edit_text_file", {
        workdir: "rw",
        path: "doc.txt",
        expected_revision: edited.revision,
        edits: [{ old_text: MARKERS.absent, new_text: MARKERS.newText }]
      }),
      "EDIT_CONFLICT: rw:doc.txt — expected 1 occurrence(s), found 0"
    )
    failed(
      await call("edit_text_file", {
        workdir: "rw",
        path: "doc.txt",
        expected_revision: made.revision,
        edits: [{ old_text: "1st", new_text: "x" }]
      }),
      "REVISION_CONFLICT: rw:doc.txt — revision does not match; read the file again"
    )
    failed(
      await call("create_text_file", { workdir: "rw", path: "bin.txt", content: `${MARKERS.binary}\u0000` }),
      "BINARY_CONTENT_NOT_ALLOWED: rw:bin.txt — text must not contain NUL characters or unpaired surrogates"
    )

    const deleted = ok(
      await call("delete_file", { workdir: "rw", path: "doc.txt", expected_revision: edited.revision }),
      DeleteFileOutput
    )
    expect(deleted).toEqual({
      workdir: "rw",
      path: "doc.txt",
      deleted: true,
      bytes_deleted: Buffer.byteLength(after),
      revision_deleted: edited.revision
    })

    const dir = ok(await call("create_directory", { workdir: "rw", path: "newdir" }), CreateDirectoryOutput)
    expect(dir.revision).toBe(await statRevision("rw", "newdir"))
    failed(
      await call("create_directory", { workdir: "rw", path: "newdir" }),
      "PATH_ALREADY_EXISTS: rw:newdir — path already exists"
    )
    const removed = ok(
      await call("delete_directory", { workdir: "rw", path: "newdir", expected_revision: dir.revision }),
      DeleteDirectoryOutput
    )
    expect(removed).toEqual({ workdir: "rw", path: "newdir", deleted: true, revision_deleted: dir.revision })
    expect(fs.readdirSync(tree.root)).toEqual([])

    // The audit line of every call, with the per-tool counters of §7 on success only.
    const audit = (
      await mcp.auditWhen((records) =>
        records.some((r) => r.tool === "delete_directory" && r.path === "newdir" && r.success === true)
      )
    ).filter((r) => r.event === "tool_call" && r.workdir === "rw")
    const line = (tool: string, p: string, success: boolean) => {
      const found = audit.filter((r) => r.tool === tool && r.path === p && r.success === success)
      expect(found, `${tool} ${p} ${success}`).toHaveLength(1)
      const { timestamp, duration_ms, level, ...rest } = found[0]!
      expect(typeof timestamp).toBe("string")
      expect(typeof duration_ms).toBe("number")
      expect(level).toBe("INFO")
      return rest
    }
    const base = (tool: string, p: string) => ({
      event: "tool_call",
      tool,
      transport: mcp.transport,
      workdir: "rw",
      path: p
    })
    expect(line("create_text_file", "seq/../doc.txt", true)).toEqual({
      ...base("create_text_file", "seq/../doc.txt"),
      success: true,
      bytes_written: made.bytes_written,
      revision: made.revision
    })
    expect(audit.filter((r) => r.tool === "edit_text_file" && r.success === true)).toHaveLength(1)
    expect(line("edit_text_file", "doc.txt", true)).toEqual({
      ...base("edit_text_file", "doc.txt"),
      success: true,
      edit_count: 2,
      bytes_before: edited.bytes_before,
      bytes_after: edited.bytes_after,
      revision: edited.revision
    })
    expect(line("delete_file", "doc.txt", true)).toEqual({
      ...base("delete_file", "doc.txt"),
      success: true,
      bytes_deleted: deleted.bytes_deleted,
      revision: edited.revision
    })
    expect(line("create_directory", "newdir", true)).toEqual({
      ...base("create_directory", "newdir"),
      success: true,
      revision: dir.revision
    })
    expect(line("create_directory", "newdir", false)).toEqual({
      ...base("create_directory", "newdir"),
      success: false,
      error_code: "PATH_ALREADY_EXISTS"
    })
    expect(line("delete_directory", "newdir", true)).toEqual({
      ...base("delete_directory", "newdir"),
      success: true,
      revision: dir.revision
    })
    expect(line("create_text_file", "bin.txt", false)).toEqual({
      ...base("create_text_file", "bin.txt"),
      success: false,
      error_code: "BINARY_CONTENT_NOT_ALLOWED"
    })
    const conflicts = audit.filter((r) => r.tool === "edit_text_file" && r.success === false)
    expect(conflicts.map((r) => r.error_code).sort()).toEqual(["EDIT_CONFLICT", "REVISION_CONFLICT"])
    for (const r of conflicts)
      expect(Object.keys(r).sort()).toEqual([
        "duration_ms",
        "error_code",
        "event",
        "level",
        "path",
        "success",
        "timestamp",
        "tool",
        "transport",
        "workdir"
      ])
  })

  it("schema violations are INVALID_ARGUMENT naming the field (empty edits, missing revision, expected_count 0)", async () => {
    fs.writeFileSync(path.join(tree.root, "schema.txt"), "a\n")
    const revision = await statRevision("rw", "schema.txt")
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      [
        "edit_text_file",
        { workdir: "rw", path: "schema.txt", expected_revision: revision, edits: [] },
        "edits"
      ],
      [
        "edit_text_file",
        { workdir: "rw", path: "schema.txt", edits: [{ old_text: "a", new_text: "b" }] },
        "expected_revision"
      ],
      [
        "edit_text_file",
        {
          workdir: "rw",
          path: "schema.txt",
          expected_revision: revision,
          edits: [{ old_text: "a", new_text: "b", expected_count: 0 }]
        },
        "expected_count"
      ],
      ["delete_file", { workdir: "rw", path: "schema.txt" }, "expected_revision"],
      ["delete_directory", { workdir: "rw", path: "d" }, "expected_revision"],
      ["create_text_file", { workdir: "rw", path: "c.txt" }, "content"]
    ]
    for (const [name, args, field] of cases) {
      const result = await call(name, args)
      expect(result.isError).toBe(true)
      expect(errorCodeOf(textOf(result))).toBe("INVALID_ARGUMENT")
      expect(textOf(result)).toContain(field)
    }
    expect(fs.readFileSync(path.join(tree.root, "schema.txt"), "utf8")).toBe("a\n")
    fs.rmSync(path.join(tree.root, "schema.txt"))
  })

  it("content, old_text and new_text never appear on stderr", () => {
    const stderr = mcp.stderrLines().join("\n")
    expect(stderr).toContain("tool_call")
    for (const marker of Object.values(MARKERS)) expect(stderr).not.toContain(marker)
    expect(stderr).not.toContain(tree.base)
    expect(stderr).not.toContain(".serverfs-tmp-")
  })
})

describe("the Agent Bridge lease over stdio", () => {
  const holdLease = async (lockFile: string): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [path.join(fixtures, "lock-holder.mjs"), lockFile], {
      stdio: ["pipe", "pipe", "inherit"]
    })
    await new Promise<void>((resolve, reject) => {
      let out = ""
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        if (out.includes("locked\n")) resolve()
        if (out.includes("busy\n")) reject(new Error("lock already held"))
      })
      child.once("exit", (code) => reject(new Error(`lock holder exited early (${String(code)})`)))
    })
    return child
  }

  it("a lease held by another process → WORKDIR_BUSY, nothing written; released → the mutation goes through", async () => {
    const locks = path.join(tree.base, "locks")
    fs.mkdirSync(path.join(locks, "active"), { recursive: true })
    const lockFile = path.join(locks, "01.lock")
    fs.writeFileSync(lockFile, "")
    const leased = fs.mkdtempSync(path.join(tree.base, "leased-"))
    const server = await startMcp({
      WORKDIR_01_ALIAS: "rw",
      WORKDIR_01_PATH: leased,
      WORKDIR_01_READ_ONLY: "false",
      SERVERFS_AGENT_BRIDGE_ENABLED: "true",
      SERVERFS_AGENT_LOCK_DIR: locks,
      // Set explicitly: the test environment has no HOME for the user-scoped default.
      SERVERFS_AGENT_BRIDGE_SOCKET: path.join(tree.base, "run", "bridge.sock")
    })
    try {
      const holder = await holdLease(lockFile)
      try {
        failed(
          await call("create_text_file", { workdir: "rw", path: "busy.txt", content: "x" }, server),
          "WORKDIR_BUSY: rw has an active Agent writer"
        )
        failed(
          await call("create_directory", { workdir: "rw", path: "busy" }, server),
          "WORKDIR_BUSY: rw has an active Agent writer"
        )
        expect(fs.readdirSync(leased)).toEqual([])
        // Reads are unaffected.
        const list = await call("list_directory", { workdir: "rw" }, server)
        expect(list.isError ?? false).toBe(false)
      } finally {
        holder.stdin?.end()
        await new Promise<void>((resolve) =>
          holder.exitCode !== null ? resolve() : holder.once("exit", () => resolve())
        )
      }
      ok(
        await call("create_text_file", { workdir: "rw", path: "free.txt", content: "free\n" }, server),
        CreateTextFileOutput
      )
      expect(fs.readFileSync(path.join(leased, "free.txt"), "utf8")).toBe("free\n")
      expect(fs.readdirSync(locks).sort()).toEqual(["01.lock", "active"])
      const isBusy = (r: Record<string, unknown>) =>
        r.event === "tool_call" && r.error_code === "WORKDIR_BUSY"
      const busy = (await server.auditWhen((records) => records.filter(isBusy).length >= 2)).filter(isBusy)
      expect(busy.map((r) => r.tool).sort()).toEqual(["create_directory", "create_text_file"])
    } finally {
      await server.close()
    }
  })
})
