/**
 * Codex network approvals through serverfs-mcp and the bridge (issue 15): a command approval
 * carrying `networkApprovalContext`, relayed as a ServerFS `command` approval with
 * `network_approval_context`, decided approve and deny with the real binary.
 *
 * Codex 0.171 asks for network access only under managed network requirements, which it reads
 * from the machine-wide `/etc/codex/requirements.toml` (`[experimental_network]`), never from
 * CODEX_HOME. Writing the host's /etc is out of the question, so SERVERFS_CODEX_BIN is a wrapper
 * that runs each `codex app-server` child (stdio transport: one per task) in a private mount
 * namespace where /etc is an overlay whose upper layer holds that file. That needs root and an
 * overlay-capable kernel; without either the suite skips with its reason (CI runs as root).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import {
  type AgentStack,
  type CodexHome,
  codexBin,
  type FakeReply,
  type FakeResponsesServer,
  makeCodexHome,
  processesMentioning,
  type RecordedRequest,
  readAllEvents,
  skipWithoutRoot,
  startAgentStack,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { eventually, expectStatus, ok, type PendingView, pendingOf, submitCodex } from "./support.js"

const needsRoot = skipWithoutRoot("a private mount namespace with /etc overlaid")

/** Whether this kernel lets us overlay /etc in a private mount namespace (probed, not assumed). */
const overlayProbe = (): string | undefined => {
  if (needsRoot) return undefined
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sfx-overlay-probe-"))
  try {
    fs.mkdirSync(path.join(dir, "upper/codex"), { recursive: true })
    fs.mkdirSync(path.join(dir, "work"))
    fs.writeFileSync(path.join(dir, "upper/codex/probe"), "ok")
    const probe = spawnSync(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        `mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/upper,workdir=${dir}/work /etc && cat /etc/codex/probe`
      ],
      { encoding: "utf8", timeout: 20_000 }
    )
    return probe.stdout === "ok" ? undefined : `unshare/overlay unavailable: ${probe.stderr || probe.error}`
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
const overlayMissing = overlayProbe()
if (overlayMissing !== undefined) {
  if (process.env.TESTS_REQUIRE_ROOT === "1") throw new Error(overlayMissing)
  console.warn(`skipping the Codex network approval suite: ${overlayMissing}`)
}

/** The only host Codex's managed network lets through without asking. */
const ALLOWED = "allowed.serverfs.test"
/** Not on the allowlist, not denied: Codex asks. */
const ASKED = "asked.serverfs.test"

/**
 * Managed network on, with an allowlist: a host neither allowed nor denied makes Codex's proxy
 * ask (a command approval with `networkApprovalContext`). `allow_local_binding`: both names
 * resolve to 127.0.0.1 (the overlay's /etc/hosts), and without it the proxy refuses private
 * addresses after the approval ("local/private network addresses are blocked").
 */
const REQUIREMENTS = [
  "[experimental_network]",
  "enabled = true",
  `allowed_domains = ["${ALLOWED}"]`,
  "allow_local_binding = true",
  ""
].join("\n")

/**
 * The wrapper: each child gets its own overlay (two mounts must not share an upper directory),
 * mounted over /etc in a mount namespace of its own; the host's /etc is only the lower layer.
 */
const writeWrapper = (dir: string): string => {
  fs.writeFileSync(path.join(dir, "requirements.toml"), REQUIREMENTS)
  fs.writeFileSync(
    path.join(dir, "hosts"),
    `${fs.readFileSync("/etc/hosts", "utf8")}\n127.0.0.1 ${ASKED} ${ALLOWED}\n`
  )
  const wrapper = path.join(dir, "codex-with-requirements")
  fs.writeFileSync(
    wrapper,
    [
      "#!/bin/sh",
      "set -e",
      `layer=$(mktemp -d "${dir}/layer.XXXXXX")`,
      'mkdir -p "$layer/upper/codex" "$layer/work"',
      `cp "${dir}/requirements.toml" "$layer/upper/codex/requirements.toml"`,
      `cp "${dir}/hosts" "$layer/upper/hosts"`,
      'export SFX_LAYER="$layer"',
      `exec unshare --mount --propagation private sh -c 'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$SFX_LAYER/upper,workdir=$SFX_LAYER/work" /etc && unset SFX_LAYER && exec "$0" "$@"' "${codexBin}" "$@"`,
      ""
    ].join("\n"),
    { mode: 0o755 }
  )
  return wrapper
}

let server: FakeResponsesServer
let home: CodexHome
let stack: AgentStack
let dir: string
const hostEtcCodexBefore = fs.existsSync("/etc/codex")
const hostsBefore = fs.readFileSync("/etc/hosts", "utf8")

const ALL = ["approve_once", "approve_session", "deny", "cancel_task"]

const respond = (taskId: string, requestId: string, decision: string) =>
  ok(stack.client, "respond_agent_approval", { task_id: taskId, request_id: requestId, decision })

describe.skipIf(needsRoot || overlayMissing !== undefined)(
  "Codex network approvals through serverfs-mcp and the bridge (requirements in an /etc overlay)",
  () => {
    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "sfx-codex-network-"))
      server = await startFakeResponsesServer()
      // `[sandbox_workspace_write] network_access`: the requirements grant no network to a
      // sandbox that has it off; with it on, commands reach the network only through the proxy.
      home = makeCodexHome({ baseUrl: server.baseUrl, extraToml: "network_access = true\n" })
      stack = await startAgentStack({
        prefix: "sfx-codex-network-",
        env: () => ({
          WORKDIR_01_AGENT_RUNTIMES: "codex",
          SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false",
          SERVERFS_CODEX_BIN: writeWrapper(dir),
          SERVERFS_CODEX_HOME: home.path,
          SERVERFS_CODEX_TRANSPORT: "stdio",
          SERVERFS_CODEX_REQUEST_TIMEOUT_SECONDS: "30"
        })
      })
    }, 120_000)

    afterAll(async () => {
      await stack?.stop()
      if (home !== undefined) {
        await eventually("no codex child left", async () =>
          processesMentioning(home.path).length === 0 ? true : undefined
        )
        home.remove()
      }
      await server?.close()
      if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
    }, 60_000)

    beforeEach(() => {
      server.reset()
    })

    /** A loopback web server standing for the outside host; records what reaches it. */
    const startTarget = async (host = ASKED) => {
      const hits: string[] = []
      const web = http.createServer((request, response) => {
        hits.push(String(request.headers.host))
        response.end("hello from the target")
      })
      await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve))
      const port = (web.address() as AddressInfo).port
      return {
        hits,
        url: `http://${host}:${port}/`,
        close: () => new Promise<void>((resolve) => web.close(() => resolve()))
      }
    }

    const fetchWithCurl = (url: string) =>
      `curl -sS -m 20 -w ' status=%{http_code}' ${url} 2>&1; echo " exit=$?"`

    const echoLastOutput = (request: RecordedRequest): FakeReply => ({
      type: "message",
      text: `model saw: ${request.toolOutputs.at(-1)?.output ?? ""}`
    })

    /** The relayed request: a command approval with the network context, nothing of the host. */
    const expectNetworkApproval = (pending: PendingView) => {
      expect(pending.payload).toMatchObject({
        category: "command",
        title: `Codex wants network access to ${ASKED}`,
        reason: `Network access to ${ASKED} requires approval`,
        network_approval_context: { host: ASKED, protocol: "http" },
        available_decisions: ALL
      })
      expect(pending.payload).not.toHaveProperty("command_display")
      const text = JSON.stringify(pending.payload)
      for (const hostPath of [dir, home.path, stack.tree.root]) expect(text).not.toContain(hostPath)
    }

    it("approve_once: the command reaches the host", async () => {
      const target = await startTarget()
      try {
        server.script({ type: "shell", command: fetchWithCurl(target.url) }, echoLastOutput)
        const taskId = await submitCodex(stack.client, "Fetch the page")
        const pending = await pendingOf(stack.client, taskId)
        expectNetworkApproval(pending)
        expect(target.hits).toEqual([])
        await respond(taskId, pending.request_id, "approve_once")
        const task = await expectStatus(stack.client, taskId, "succeeded")
        expect(task.final_response).toMatch(/hello from the target status=200 exit=0/)
        expect(target.hits).toEqual([target.url.slice("http://".length, -1)])
        const events = await readAllEvents(stack.client, taskId)
        expect(events.find((e) => e.event_type === "approval.resolved")?.payload).toMatchObject({
          decision: "approve_once"
        })
      } finally {
        await target.close()
      }
    })

    it("deny: the host is not reached, the model is told, the task goes on", async () => {
      const target = await startTarget()
      try {
        server.script({ type: "shell", command: fetchWithCurl(target.url) }, echoLastOutput)
        const taskId = await submitCodex(stack.client, "Fetch the page")
        const pending = await pendingOf(stack.client, taskId)
        expectNetworkApproval(pending)
        await respond(taskId, pending.request_id, "deny")
        const task = await expectStatus(stack.client, taskId, "succeeded")
        // Codex fails the whole command (not "declined": it had started) and tells the model why.
        expect(task.final_response).toMatch(/^model saw: .*rejected by user/)
        expect(server.requests().at(-1)?.toolOutputs.at(-1)?.output).toMatch(/rejected by user/)
        expect(target.hits).toEqual([])
        const events = await readAllEvents(stack.client, taskId)
        expect(events.find((e) => e.event_type === "approval.resolved")?.payload).toMatchObject({
          decision: "deny"
        })
        const command = events.find(
          (e) => e.event_type === "item.completed" && e.payload.type === "commandExecution"
        )
        expect(command?.payload).toMatchObject({ status: "failed", cwd: "" })
      } finally {
        await target.close()
      }
    })

    it("an allowlisted host is reached without asking", async () => {
      const target = await startTarget(ALLOWED)
      try {
        server.script({ type: "shell", command: fetchWithCurl(target.url) }, echoLastOutput)
        const taskId = await submitCodex(stack.client, "Fetch the allowed page")
        const task = await expectStatus(stack.client, taskId, "succeeded")
        expect(task.final_response).toMatch(/hello from the target status=200 exit=0/)
        const events = await readAllEvents(stack.client, taskId)
        expect(events.filter((e) => e.event_type === "approval.requested")).toEqual([])
      } finally {
        await target.close()
      }
    })

    it("leaves the host's /etc alone", () => {
      expect(fs.existsSync("/etc/codex")).toBe(hostEtcCodexBefore)
      expect(fs.readFileSync("/etc/hosts", "utf8")).toBe(hostsBefore)
      // The overlays lived only in the children's namespaces: none on this side.
      const etcMounts = fs
        .readFileSync("/proc/self/mountinfo", "utf8")
        .split("\n")
        .filter((line) => line.split(" ")[4] === "/etc")
      expect(etcMounts.filter((line) => line.includes(" - overlay "))).toEqual([])
    })
  }
)
