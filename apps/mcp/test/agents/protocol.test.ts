import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { promisify } from "node:util"
import {
  type AgentStack,
  agentStackEnv,
  type BridgeProcess,
  type BridgeResponse,
  bridgeCall,
  makeTempTree,
  rawExchange,
  readAllEvents,
  requestLine,
  skipWithoutRoot,
  startAgentStack,
  startBridgeProcess,
  type TempTree
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { expectNoHostPath, submit, waitForEnd } from "./support.js"

/**
 * The bridge's RPC boundary (bridge-internals §1), probed with raw `net` clients on the real
 * socket: envelope errors get the right code and nothing behind them is dispatched. Every
 * rejected request below is a task.submit whose effect would be visible: afterwards a valid
 * client finds no task under its idempotency key, and the global event id has not moved. Peer
 * credentials are checked with a client that really runs as another uid (setpriv).
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

let stack: AgentStack
let socket: string

const MAX_FRAME = 1_048_576

beforeAll(async () => {
  stack = await startAgentStack({ prefix: "serverfs-agent-rpc-" })
  socket = stack.env.SERVERFS_AGENT_BRIDGE_SOCKET ?? ""
})

afterAll(async () => {
  await stack?.stop()
})

const submitParams = (key: string, prompt = "write:dispatched.txt=1\ncomplete:dispatched") => ({
  runtime: "fake",
  workdir: "main",
  path: "",
  profile: "workspace-write",
  prompt,
  idempotency_key: key
})

const envelope = (fields: Record<string, unknown>) => `${JSON.stringify(fields)}\n`

/** The highest event id so far, seen by a valid client through a task that has fully finished. */
const lastEventId = async (): Promise<number> => {
  const id = await submit(stack.client, "complete:marker", { profile: "review" })
  await waitForEnd(stack.client, id, ["succeeded"])
  const events = await readAllEvents(stack.client, id)
  expect(events.at(-1)?.event_type).toBe("task.completed")
  return events.at(-1)?.event_id ?? -1
}

/** A valid submission under `key` with another prompt: accepted iff no task holds the key. */
const keyIsFree = async (key: string): Promise<boolean> => {
  const response = await bridgeCall(socket, "task.submit", {
    ...submitParams(key, "complete:probe"),
    profile: "review"
  })
  if (response.ok) return true
  expect(response.error?.code).toBe("AGENT_IDEMPOTENCY_CONFLICT")
  return false
}

const errorOf = (response: unknown) => response as BridgeResponse

describe("envelope errors over the real socket", () => {
  it("each gets its code, the connection's fate is right, and nothing is dispatched", async () => {
    const lastBefore = await lastEventId()
    const cases: ReadonlyArray<{
      readonly name: string
      readonly line: string
      readonly code: string
      readonly requestId: string | null
      readonly message?: RegExp
    }> = [
      {
        name: "unknown method",
        line: envelope({ protocol_version: 1, request_id: "r-method", method: "task.delete", params: {} }),
        code: "METHOD_NOT_FOUND",
        requestId: "r-method",
        message: /^unknown bridge method: task\.delete$/
      },
      {
        name: "unknown param",
        line: envelope({
          protocol_version: 1,
          request_id: "r-param",
          method: "task.submit",
          params: { ...submitParams("k-param"), sudo: true }
        }),
        code: "INVALID_REQUEST",
        requestId: "r-param",
        message: /unknown field sudo/
      },
      {
        name: "param of the wrong type",
        line: envelope({
          protocol_version: 1,
          request_id: "r-type",
          method: "task.submit",
          params: { ...submitParams("k-type"), prompt: 42 }
        }),
        code: "INVALID_REQUEST",
        requestId: "r-type",
        message: /prompt/
      },
      {
        name: "unknown envelope key",
        line: envelope({
          protocol_version: 1,
          request_id: "r-key",
          method: "task.submit",
          params: submitParams("k-key"),
          auth: "root"
        }),
        code: "INVALID_REQUEST",
        requestId: "r-key",
        message: /unknown key auth/
      },
      {
        name: "missing envelope key",
        line: envelope({ protocol_version: 1, request_id: "r-missing", method: "task.submit" }),
        code: "INVALID_REQUEST",
        requestId: "r-missing",
        message: /missing key params/
      },
      {
        name: "protocol_version 2",
        line: envelope({
          protocol_version: 2,
          request_id: "r-v2",
          method: "task.submit",
          params: submitParams("k-v2")
        }),
        code: "PROTOCOL_VERSION_UNSUPPORTED",
        requestId: "r-v2"
      },
      {
        name: "protocol_version true",
        line: envelope({
          protocol_version: true,
          request_id: "r-bool",
          method: "task.submit",
          params: submitParams("k-bool")
        }),
        code: "INVALID_REQUEST",
        requestId: "r-bool"
      },
      {
        name: "protocol_version as a string",
        line: envelope({
          protocol_version: "1",
          request_id: "r-str",
          method: "task.submit",
          params: submitParams("k-str")
        }),
        code: "INVALID_REQUEST",
        requestId: "r-str"
      },
      {
        name: "invalid JSON",
        line: `{"protocol_version":1,"request_id":"r-json","method":"task.submit","params":${JSON.stringify(submitParams("k-json"))}\n`,
        code: "INVALID_REQUEST",
        requestId: null,
        message: /not valid JSON/
      },
      {
        name: "NaN",
        line: `{"protocol_version":1,"request_id":"r-nan","method":"task.events","params":{"task_id":"agt_x","limit":NaN}}\n`,
        code: "INVALID_REQUEST",
        requestId: null
      },
      {
        name: "not an object",
        line: `[1,2,3]\n`,
        code: "INVALID_REQUEST",
        requestId: null
      },
      {
        name: "empty request_id",
        line: envelope({
          protocol_version: 1,
          request_id: "",
          method: "task.submit",
          params: submitParams("k-id")
        }),
        code: "INVALID_REQUEST",
        requestId: null
      }
    ]
    for (const c of cases) {
      // After the rejection the same connection still serves a valid request.
      const exchange = await rawExchange(socket, c.line + requestLine("runtime.list", {}, "r-after"), {
        lines: 2
      })
      expect(exchange.responses, c.name).toHaveLength(2)
      const [rejected, after] = exchange.responses.map(errorOf)
      expect(rejected, c.name).toEqual({
        request_id: c.requestId,
        ok: false,
        error: { code: c.code, message: expect.any(String) }
      })
      if (c.message !== undefined) expect(rejected?.error?.message, c.name).toMatch(c.message)
      expect(after, c.name).toMatchObject({ request_id: "r-after", ok: true })
      expect(exchange.closedByPeer, c.name).toBe(false)
    }

    // A frame over 1 MiB: REQUEST_TOO_LARGE without a request id, and the connection is closed.
    const huge = envelope({
      protocol_version: 1,
      request_id: "r-huge",
      method: "task.submit",
      params: submitParams("k-huge", `complete:${"x".repeat(MAX_FRAME)}`)
    })
    expect(Buffer.byteLength(huge)).toBeGreaterThan(MAX_FRAME)
    const oversized = await rawExchange(socket, huge + requestLine("runtime.list", {}, "r-after"))
    expect(oversized.responses).toEqual([
      { request_id: null, ok: false, error: { code: "REQUEST_TOO_LARGE", message: expect.any(String) } }
    ])
    expect(oversized.closedByPeer).toBe(true)

    // Nothing was dispatched. No event was appended in between: the next task's first event
    // directly follows the last one seen before the rejections (event ids are global).
    const next = await submit(stack.client, "complete:next", { profile: "review" })
    await waitForEnd(stack.client, next, ["succeeded"])
    expect((await readAllEvents(stack.client, next))[0]).toMatchObject({
      event_id: lastBefore + 1,
      event_type: "task.started"
    })
    // No task holds any of their idempotency keys, and nothing was written.
    for (const key of ["k-param", "k-type", "k-key", "k-v2", "k-bool", "k-str", "k-json", "k-id", "k-huge"]) {
      expect(await keyIsFree(key), key).toBe(true)
    }
    expect(fs.existsSync(`${stack.tree.root}/dispatched.txt`)).toBe(false)
  })

  it("several requests on one connection are answered in order; the bridge's own bounds have their codes", async () => {
    const done = await submit(stack.client, "large:270000")
    await waitForEnd(stack.client, done, ["succeeded"])
    const lines = [
      requestLine("task.events", { task_id: done, limit: 501 }, "r-1"),
      requestLine("task.events", { task_id: done, after_event_id: -1 }, "r-2"),
      requestLine("task.events", { task_id: done, limit: true }, "r-3"),
      requestLine("task.result.read", { task_id: done, max_bytes: 65_537 }, "r-4"),
      // One byte cannot hold the 2-byte character at offset 1.
      requestLine("task.result.read", { task_id: done, offset_bytes: 1, max_bytes: 1 }, "r-5"),
      requestLine("task.get", { task_id: done }, "r-6"),
      requestLine("task.cancel", { task_id: "agt_nope" }, "r-7")
    ]
    const exchange = await rawExchange(socket, lines.join(""), { lines: lines.length })
    const responses = exchange.responses.map(errorOf)
    expect(responses.map((r) => r.request_id)).toEqual(["r-1", "r-2", "r-3", "r-4", "r-5", "r-6", "r-7"])
    expect(responses.map((r) => r.error?.code ?? "ok")).toEqual([
      "INVALID_LIMIT",
      "INVALID_LIMIT",
      "INVALID_REQUEST",
      "INVALID_RESULT_LIMIT",
      "INVALID_RESULT_LIMIT",
      "ok",
      "AGENT_TASK_NOT_FOUND"
    ])
    expect(responses[5]?.result).toMatchObject({ task_id: done, status: "succeeded" })
  })

  it("no host path in anything the MCP client received", () => {
    expectNoHostPath(stack)
  })
})

// ---- peer credentials ------------------------------------------------------------------------
const NOBODY = 65534
const run = promisify(execFile)

/** A client that sends one request line and reports what it got back and how the connection ended. */
const PEER_CLIENT = `
import * as net from "node:net"
const [socketPath, line] = process.argv.slice(2)
const socket = net.createConnection({ path: socketPath })
let out = ""
socket.on("connect", () => socket.write(line + "\\n"))
socket.on("data", (chunk) => { out += chunk.toString("utf8") })
const done = (how) => { process.stdout.write(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), out, how }) + "\\n"); process.exit(0) }
socket.on("end", () => done("closed"))
socket.on("error", (e) => done("error:" + e.code))
setTimeout(() => done("timeout"), 10000)
`

interface PeerRun {
  readonly uid: number
  readonly gid: number
  readonly out: string
  readonly how: string
}

// setpriv can run the client as uid 65534 only as root: skipped otherwise.
describe.skipIf(skipWithoutRoot("setpriv runs the client as uid 65534"))(
  "peer credentials (SO_PEERCRED)",
  () => {
    let base: string
    let tree: TempTree
    let bridge: BridgeProcess | undefined

    beforeAll(() => {
      // Everything a uid-65534 client must reach lives under a directory it may traverse.
      tree = makeTempTree("serverfs-agent-peer-")
      base = tree.base
      fs.chmodSync(base, 0o711)
      fs.writeFileSync(`${base}/peer-client.mjs`, PEER_CLIENT, { mode: 0o644 })
    })

    afterAll(async () => {
      await bridge?.kill("SIGTERM")
      tree?.remove()
    })

    const asNobody = async (line: string): Promise<PeerRun> => {
      const { stdout } = await run(
        "setpriv",
        [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          "--clear-groups",
          process.execPath,
          `${base}/peer-client.mjs`,
          `${base}/run/bridge.sock`,
          line.trimEnd()
        ],
        { cwd: "/", timeout: 30_000 }
      )
      return JSON.parse(stdout) as PeerRun
    }

    const start = async (peer: Record<string, string>) => {
      await bridge?.kill("SIGTERM")
      bridge = await startBridgeProcess({ ...agentStackEnv(tree), ...peer })
    }

    it("shared mode for uid/gid 65534: that client is served, root is refused", async () => {
      await start({ SERVERFS_AGENT_PEER_UID: String(NOBODY), SERVERFS_AGENT_PEER_GID: String(NOBODY) })
      const socketStat = fs.statSync(`${base}/run/bridge.sock`)
      expect(socketStat.mode & 0o777).toBe(0o660)
      expect(socketStat.gid).toBe(NOBODY)
      const served = await asNobody(requestLine("runtime.list", {}, "r-nobody"))
      expect(served).toMatchObject({ uid: NOBODY, gid: NOBODY })
      const response = JSON.parse(served.out.trim()) as BridgeResponse
      expect(response).toMatchObject({ request_id: "r-nobody", ok: true })
      const runtimes = (response.result?.runtimes ?? []) as ReadonlyArray<{ name: string }>
      expect(runtimes.map((r) => r.name)).toContain("fake")

      const root = await rawExchange(`${base}/run/bridge.sock`, requestLine("runtime.list", {}, "r-root"))
      expect(root.responses).toEqual([
        {
          request_id: null,
          ok: false,
          error: {
            code: "PEER_NOT_AUTHORIZED",
            message: "the connecting process is not authorized to use the Agent Bridge"
          }
        }
      ])
      expect(root.closedByPeer).toBe(true)
    })

    it("SERVERFS_AGENT_PEER_UID=0: a uid-65534 client reaching the socket is refused and nothing is dispatched", async () => {
      await start({ SERVERFS_AGENT_PEER_UID: "0" })
      // Private mode (0700/0600); open it up so the other uid can connect at all.
      fs.chmodSync(`${base}/run`, 0o711)
      fs.chmodSync(`${base}/run/bridge.sock`, 0o666)
      const params = {
        runtime: "fake",
        workdir: "main",
        path: "",
        profile: "workspace-write",
        prompt: "write:by-nobody.txt=1\ncomplete:nobody",
        idempotency_key: "k-nobody"
      }
      const refused = await asNobody(requestLine("task.submit", params, "r-submit"))
      expect(refused).toMatchObject({ uid: NOBODY, gid: NOBODY, how: "closed" })
      expect(JSON.parse(refused.out.trim())).toEqual({
        request_id: null,
        ok: false,
        error: {
          code: "PEER_NOT_AUTHORIZED",
          message: "the connecting process is not authorized to use the Agent Bridge"
        }
      })
      // Root is the allowed peer: the key is free (another prompt under it is accepted).
      const probe = await bridgeCall(`${base}/run/bridge.sock`, "task.submit", {
        ...params,
        prompt: "complete:root",
        profile: "review"
      })
      expect(probe).toMatchObject({ ok: true, result: { status: "queued" } })
      expect(fs.existsSync(`${base}/workdir/by-nobody.txt`)).toBe(false)
    })
  }
)
