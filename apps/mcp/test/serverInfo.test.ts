import { createRequire } from "node:module"
import { type McpProcess, makeTempTree, scopedMcp, type TempTree, textOf } from "@serverfs/testkit"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { catalogMarker, type ListedTool, MARKER_PLACEHOLDER } from "../src/CatalogMarker.js"

/**
 * server_info through the real `serverfs-mcp` process over stdio (beyond the reference, after
 * the peer agent-vm-mcp): the marker it returns is the one in its own description, it can be
 * recomputed from tools/list as the client received it, it is the same on every start of the
 * same catalog, and it differs exactly when the catalog does.
 */

const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }

let trees: Array<TempTree> = []

beforeAll(() => {
  trees = [makeTempTree("serverfs-info-a-"), makeTempTree("serverfs-info-b-")]
})

afterAll(() => {
  for (const tree of trees) tree.remove()
})

const tree = (i: 0 | 1): TempTree => trees[i] as TempTree

const readOnly = (i: 0 | 1): Record<string, string> => ({
  WORKDIR_01_ALIAS: "main",
  WORKDIR_01_PATH: tree(i).root
})

/**
 * Agent tools need no running bridge to be listed: the client connects per call. (Codex runs
 * only in workspace-write mode, which needs a read-write workdir; read-write alone does not
 * change the catalog, see below.)
 */
const withAgents = (i: 0 | 1): Record<string, string> => ({
  ...readOnly(i),
  WORKDIR_01_READ_ONLY: "false",
  WORKDIR_01_AGENT_MODE: "workspace-write",
  WORKDIR_01_AGENT_RUNTIMES: "codex",
  SERVERFS_AGENT_BRIDGE_ENABLED: "true",
  SERVERFS_AGENT_BRIDGE_SOCKET: `${tree(i).base}/run/bridge.sock`,
  // Set explicitly: the test environment has no HOME for the user-scoped default.
  SERVERFS_AGENT_LOCK_DIR: `${tree(i).base}/locks`
})

interface Info {
  readonly name: string
  readonly version: string
  readonly catalog: {
    readonly marker: string
    readonly tool_count: number
    readonly tool_names: ReadonlyArray<string>
    readonly counts: Record<string, number>
  }
}

interface Observed {
  readonly tools: ReadonlyArray<ListedTool>
  readonly info: Info
  readonly text: string
  readonly audit: ReadonlyArray<Record<string, unknown>>
}

/** One start of the server: tools/list, one server_info call, the audit lines, then close. */
const observe = (env: Record<string, string>): Promise<Observed> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(scopedMcp(env), (mcp: McpProcess) =>
        Effect.promise(async () => {
          const { tools } = await mcp.client.listTools()
          const result = await mcp.client.callTool({ name: "server_info", arguments: {} })
          expect(result.isError).toBeFalsy()
          const audit = await mcp.auditWhen((records) =>
            records.some((r) => r.event === "tool_call" && r.tool === "server_info")
          )
          return {
            tools: tools as unknown as ReadonlyArray<ListedTool>,
            info: result.structuredContent as unknown as Info,
            text: textOf(result),
            audit
          }
        })
      )
    )
  )

/** Each configuration is started once per run (the first test that needs it); starts are slow. */
const memo = (env: () => Record<string, string>): (() => Promise<Observed>) => {
  let seen: Promise<Observed> | undefined
  return () => {
    seen ??= observe(env())
    return seen
  }
}
const readOnlyA = memo(() => readOnly(0))
const readOnlyB = memo(() => readOnly(1))
const agentsA = memo(() => withAgents(0))

/** The marker in server_info's description, as a host that froze tools/list holds it. */
const describedMarker = (tools: ReadonlyArray<ListedTool>): string | undefined =>
  tools.find((t) => t.name === "server_info")?.description?.match(/\b[0-9a-f]{16}\b/)?.[0]

describe("server_info over stdio", () => {
  it("answers name, version, tool names and counts; its marker is the one in its description", async () => {
    const seen = await readOnlyA()
    expect(seen.info).toEqual({
      name: "ServerFS",
      version,
      catalog: {
        marker: expect.stringMatching(/^[0-9a-f]{16}$/),
        tool_count: 12,
        tool_names: seen.tools.map((t) => t.name),
        counts: { read: 6, mutation: 5, binary: 0, agent: 0, server: 1 }
      }
    })
    expect(describedMarker(seen.tools)).toBe(seen.info.catalog.marker)
    expect(JSON.parse(seen.text)).toEqual(seen.info)
    expect(seen.text).not.toContain(tree(0).base)
    const tool = seen.tools.find((t) => t.name === "server_info")
    expect(tool?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false })
  })

  it("the marker is recomputable from tools/list as the client received it (marker → placeholder, hash)", async () => {
    const seen = await readOnlyA()
    const marker = seen.info.catalog.marker
    const restored = seen.tools.map((t) =>
      t.name === "server_info"
        ? { ...t, description: (t.description ?? "").replaceAll(marker, MARKER_PLACEHOLDER) }
        : t
    )
    expect(catalogMarker(restored)).toBe(marker)
  })

  it("writes one tool_call audit line with the marker, and the startup line carries it too", async () => {
    const seen = await readOnlyA()
    const calls = seen.audit.filter((r) => r.event === "tool_call" && r.tool === "server_info")
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({
      success: true,
      catalog_marker: seen.info.catalog.marker,
      tool_count: 12
    })
    expect(seen.audit.find((r) => r.event === "startup")).toMatchObject({
      catalog_marker: seen.info.catalog.marker,
      tools: 12
    })
    expect(JSON.stringify(seen.audit)).not.toContain(tree(0).base)
  })

  it("is identical across two starts of the same configuration, and on another host path", async () => {
    const first = await readOnlyA()
    const second = await observe(readOnly(0))
    expect(second.info).toEqual(first.info)
    expect(second.tools).toEqual(first.tools)
    // Host paths are not in the catalog: the same configuration elsewhere has the same marker.
    const elsewhere = await readOnlyB()
    expect(elsewhere.info.catalog.marker).toBe(first.info.catalog.marker)
  })

  it("a read-write workdir keeps the marker: the mutation tools are always listed", async () => {
    const ro = await readOnlyA()
    const rw = await observe({ ...readOnly(0), WORKDIR_01_READ_ONLY: "false" })
    expect(rw.info.catalog.marker).toBe(ro.info.catalog.marker)
  })

  it("the agent tools change the marker; the same agent configuration twice does not", async () => {
    const ro = await readOnlyA()
    const agents = await agentsA()
    expect(agents.info.catalog.marker).not.toBe(ro.info.catalog.marker)
    expect(describedMarker(agents.tools)).toBe(agents.info.catalog.marker)
    expect(agents.info.catalog).toMatchObject({
      tool_count: 22,
      counts: { read: 6, mutation: 5, binary: 0, agent: 10, server: 1 }
    })
    const again = await observe(withAgents(1))
    expect(again.info.catalog.marker).toBe(agents.info.catalog.marker)
  })

  it("a setting advertised in a schema (the list_directory default limit) changes the marker", async () => {
    const ro = await readOnlyA()
    const limited = await observe({ ...readOnly(0), SERVERFS_DEFAULT_LIST_LIMIT: "17" })
    expect(limited.info.catalog.marker).not.toBe(ro.info.catalog.marker)
    // A stale snapshot is detectable: the old description's marker differs from the live answer.
    expect(describedMarker(ro.tools)).not.toBe(limited.info.catalog.marker)
  })
})
