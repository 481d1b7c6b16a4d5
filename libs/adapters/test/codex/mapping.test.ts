/**
 * The pure Codex ↔ ServerFS mapping (spec v0.3 §16–§17, bridge-internals §7): decisions both
 * ways, path redaction of what the chat sees, permission grants, questions and answers, the
 * final text, progress events. Shapes the real binary cannot be made to send offline (secret
 * questions, network contexts, absent decision lists) are covered here.
 */
import { describe, expect, it } from "@effect/vitest"
import { HostPathRedaction } from "@serverfs/domain"
import { childEnvironment } from "../../src/ChildEnvironment.js"
import { approvalPayload } from "../../src/claude/ClaudeMapping.js"
import {
  commandApproval,
  decisionsFrom,
  fileChangeApproval,
  finalTextOf,
  itemEvent,
  nativeDecision,
  permissionApproval,
  permissionReply,
  questionPayload,
  questionReply,
  requestFailure,
  retainChanges,
  turnFailure
} from "../../src/codex/CodexMapping.js"
import { CodexRpcError } from "../../src/codex/CodexTransport.js"
import type {
  CommandExecutionRequestApprovalParams,
  PermissionsRequestApprovalParams,
  ThreadItem,
  ToolRequestUserInputParams
} from "../../src/codex/protocol/generated/v2/index.js"
import { relativeCwd } from "../../src/RelativeCwd.js"

const ROOT = "/srv/work/app"
/** The task's redaction, as the adapter builds it from the turn's workdir root. */
const R = new HostPathRedaction(ROOT)
const displayPath = (root: string, value: string) => new HostPathRedaction(root).path(value)
const redactCommand = (root: string, command: string) => new HostPathRedaction(root).command(command)
const scrubMessage = (root: string, message: string) => new HostPathRedaction(root).message(message)

const commandParams = (
  extra: Partial<CommandExecutionRequestApprovalParams>
): CommandExecutionRequestApprovalParams => ({
  kind: "command",
  threadId: "th",
  turnId: "tu",
  itemId: "call_1",
  startedAtMs: 0,
  environmentId: "local",
  ...extra
})

const ALL = ["approve_once", "approve_session", "deny", "cancel_task"]

describe("shared with the Claude adapter", () => {
  it('relative_cwd: the task record\'s form, "" at the root, for both runtimes', () => {
    expect(relativeCwd(ROOT, ROOT)).toBe("")
    expect(relativeCwd(R, `${ROOT}/`)).toBe("")
    expect(relativeCwd(R, `${ROOT}/sub/../sub/x`)).toBe("sub/x")
    expect(relativeCwd(R, `${ROOT}/../other`)).toBe("<outside-workdir>")
    expect(relativeCwd(R, "/srv/work/application")).toBe("<outside-workdir>")
    const codex = commandApproval(commandParams({ command: "ls", cwd: ROOT }), R)
    const claude = approvalPayload("Bash", { command: "ls" }, {}, { cwd: ROOT, workdirRoot: ROOT }, false)
    expect(codex.relative_cwd).toBe("")
    expect(claude.relative_cwd).toBe("")
  })

  it("the CLI environment: no SERVERFS_* or WORKDIR_* name, everything else kept", () => {
    expect(
      childEnvironment({
        PATH: "/bin",
        HOME: "/h",
        CODEX_HOME: "/c",
        OPENAI_API_KEY: "k",
        HTTPS_PROXY: "http://p",
        LANG: "C.UTF-8",
        SERVERFS_BRIDGE_SOCKET: "/run/s.sock",
        SERVERFS_CODEX_HOME: "/c",
        WORKDIR_01_PATH: "/srv/work/app",
        WORKDIR_DEFAULTS: "x",
        X: undefined
      })
    ).toEqual({
      PATH: "/bin",
      HOME: "/h",
      CODEX_HOME: "/c",
      OPENAI_API_KEY: "k",
      HTTPS_PROXY: "http://p",
      LANG: "C.UTF-8"
    })
  })
})

describe("decisions", () => {
  it("every decision Codex honours is offered, whatever it lists; amendments never are", () => {
    // What 0.171 lists for an escalated command: decline and acceptForSession are still honoured.
    expect(
      decisionsFrom([
        "accept",
        { acceptWithExecpolicyAmendment: { execpolicy_amendment: ["echo"] } },
        "cancel"
      ])
    ).toEqual(ALL)
    expect(decisionsFrom(["cancel", "decline", "acceptForSession", "accept"])).toEqual(ALL)
    expect(
      decisionsFrom([
        "accept",
        "acceptForSession",
        {
          applyNetworkPolicyAmendment: { network_policy_amendment: { host: "example.com", action: "allow" } }
        },
        "cancel"
      ])
    ).toEqual(ALL)
  })

  it("absent or untranslatable lists offer the same four", () => {
    expect(decisionsFrom(undefined)).toEqual(ALL)
    expect(decisionsFrom(null)).toEqual(ALL)
    expect(decisionsFrom([])).toEqual(ALL)
  })

  it("map to Codex's: approve_once→accept, approve_session→acceptForSession, deny→decline, cancel_task→cancel", () => {
    expect(["approve_once", "approve_session", "deny", "cancel_task", "bogus"].map(nativeDecision)).toEqual([
      "accept",
      "acceptForSession",
      "decline",
      "cancel",
      "decline"
    ])
  })
})

describe("host paths", () => {
  it("display paths: workdir-relative, '.' for the root, <outside-workdir> otherwise (no prefix tricks)", () => {
    expect(displayPath(ROOT, ROOT)).toBe(".")
    expect(displayPath(ROOT, `${ROOT}/`)).toBe(".")
    expect(displayPath(ROOT, `${ROOT}/src/a.ts`)).toBe("src/a.ts")
    expect(displayPath(ROOT, `${ROOT}_evil/a.ts`)).toBe("<outside-workdir>")
    expect(displayPath(ROOT, `${ROOT}/../secret`)).toBe("<outside-workdir>")
    expect(displayPath(ROOT, "/etc/passwd")).toBe("<outside-workdir>")
    expect(displayPath(ROOT, "relative/x")).toBe("relative/x")
  })

  it("commands: the workdir root as a whole path becomes relative; other text is kept", () => {
    expect(redactCommand(ROOT, `/bin/bash -lc 'cat ${ROOT}/src/a.ts > ${ROOT}/out'`)).toBe(
      "/bin/bash -lc 'cat src/a.ts > out'"
    )
    expect(redactCommand(ROOT, `cd ${ROOT} && ls ${ROOT}/`)).toBe("cd . && ls .")
    expect(redactCommand(ROOT, `ls ${ROOT}_evil/x`)).toBe(`ls ${ROOT}_evil/x`)
    expect(redactCommand(ROOT, "rm /tmp/x")).toBe("rm /tmp/x")
  })

  it("provider messages: the workdir becomes <workdir>, other absolute paths <path>, bounded", () => {
    expect(
      scrubMessage(ROOT, `failed in ${ROOT}/src and /home/u/.codex/x (see http://127.0.0.1:9/v1/responses)`)
    ).toBe("failed in <workdir>/src and <path> (see http://127.0.0.1:9/v1/responses)")
    expect(scrubMessage(ROOT, "x".repeat(5000)).length).toBe(2001)
  })
})

describe("approvals", () => {
  it("command: display redacted, relative cwd, network context kept, decisions translated", () => {
    const payload = commandApproval(
      commandParams({
        command: `/bin/bash -lc 'curl -o ${ROOT}/x https://example.com'`,
        cwd: `${ROOT}/sub`,
        reason: "download",
        networkApprovalContext: { host: "example.com", protocol: "https" },
        additionalPermissions: {
          network: null,
          fileSystem: { read: null, write: [`${ROOT}/out`, "/opt/x"] }
        },
        availableDecisions: ["accept", "acceptForSession", "cancel"]
      }),
      R
    )
    expect(payload).toEqual({
      category: "command",
      title: "Codex wants to run a command",
      available_decisions: ALL,
      reason: "download",
      command_display: "/bin/bash -lc 'curl -o x https://example.com'",
      relative_cwd: "sub",
      additional_permissions: {
        network: null,
        fileSystem: { read: null, write: ["out", "<outside-workdir>"] }
      },
      network_approval_context: { host: "example.com", protocol: "https" }
    })
  })

  it("network access with no command (as Codex 0.171 asks it): the host in the title, no empty command", () => {
    const payload = commandApproval(
      commandParams({
        command: null,
        commandActions: null,
        cwd: null,
        reason: "Network access to asked.example requires approval",
        networkApprovalContext: { host: "asked.example", protocol: "http" },
        availableDecisions: null
      }),
      R
    )
    expect(payload.title).toBe("Codex wants network access to asked.example")
    expect(payload).not.toHaveProperty("command_display")
    expect(payload.network_approval_context).toEqual({ host: "asked.example", protocol: "http" })
  })

  it("command without a command line falls back to the parsed actions; no list → the same four", () => {
    const payload = commandApproval(
      commandParams({
        commandActions: [{ type: "unknown", command: "make test" }],
        availableDecisions: null
      }),
      R
    )
    expect(payload.command_display).toBe("make test")
    expect(payload.available_decisions).toEqual(ALL)
    expect(payload.relative_cwd).toBeUndefined()
  })

  it("file change: each change with its kind and redacted diff (or grantRoot), the four decisions", () => {
    const params = {
      threadId: "th",
      turnId: "tu",
      itemId: "i",
      startedAtMs: 0,
      reason: "write",
      grantRoot: "/opt"
    }
    const changes = retainChanges([
      {
        path: `${ROOT}/a.ts`,
        kind: { type: "update", move_path: null },
        diff: `@@ -1 +1 @@\n-x\n+import "${ROOT}/b"\n`
      },
      { path: `${ROOT}/new.txt`, kind: { type: "add" }, diff: "hello\n" },
      { path: "/etc/x", kind: { type: "delete" }, diff: "gone\n" }
    ])
    expect(fileChangeApproval(params, changes, R)).toEqual({
      category: "file_change",
      title: "Codex wants to change files",
      available_decisions: ALL,
      reason: "write",
      file_changes: [
        { path: "a.ts", kind: "update", diff: '--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-x\n+import "b"\n' },
        { path: "new.txt", kind: "add", diff: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n" },
        {
          path: "<outside-workdir>",
          kind: "delete",
          diff: "--- a/<outside-workdir>\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
        }
      ]
    })
    expect(fileChangeApproval(params, [], R).file_changes).toEqual([{ path: "<outside-workdir>" }])
  })

  it("file change: an item's changes are held bounded in memory; what is left out is announced", () => {
    const big = "+x\n".repeat(40_000)
    const changes = retainChanges(
      Array.from({ length: 4 }, (_, i) => ({
        path: `${ROOT}/f${i}`,
        kind: { type: "update" as const, move_path: null },
        diff: `@@ -1 +1,40000 @@\n${big}`
      }))
    )
    const held = changes.reduce((n, c) => n + Buffer.byteLength(c.diff, "utf8"), 0)
    expect(held).toBeLessThanOrEqual(2 * 65_536 + 65_536)
    expect(changes.at(-1)).toMatchObject({ diff: "", omittedBytes: expect.any(Number) })
    const payload = fileChangeApproval(
      { threadId: "th", turnId: "tu", itemId: "i", startedAtMs: 0 },
      changes,
      R
    )
    expect(payload.file_changes?.map((c) => c.diff_truncated)).toEqual([true, true, true, true])
    expect(payload.file_changes?.[0]?.diff).toMatch(/\n… \[diff truncated: \d+ more bytes\]\n$/)
  })

  const permissionParams: PermissionsRequestApprovalParams = {
    threadId: "th",
    turnId: "tu",
    itemId: "i",
    environmentId: "local",
    startedAtMs: 0,
    cwd: ROOT,
    reason: "deps",
    permissions: { network: { enabled: true }, fileSystem: { read: null, write: [`${ROOT}/build`] } }
  }

  it("permissions: top-level categories are the selectable ids, all four decisions, paths redacted", () => {
    expect(permissionApproval(permissionParams, R)).toEqual({
      category: "provider_permission",
      title: "Codex asks for additional permissions",
      available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"],
      reason: "deps",
      relative_cwd: "",
      requested_permissions: [
        { permission_id: "network", kind: "network", details: { enabled: true } },
        { permission_id: "fileSystem", kind: "file_system", details: { read: null, write: ["build"] } }
      ]
    })
    const onlyNetwork = { ...permissionParams, permissions: { network: { enabled: true }, fileSystem: null } }
    expect(permissionApproval(onlyNetwork, R).requested_permissions?.map((p) => p.permission_id)).toEqual([
      "network"
    ])
  })

  it("permission replies: the granted subset or all, turn or session scope; nothing on deny/cancel", () => {
    expect(
      permissionReply(permissionParams, { decision: "approve_once", granted_permission_ids: ["network"] })
    ).toEqual({
      permissions: { network: { enabled: true } },
      scope: "turn"
    })
    expect(
      permissionReply(permissionParams, { decision: "approve_session", granted_permission_ids: [] })
    ).toEqual({
      permissions: permissionParams.permissions,
      scope: "session"
    })
    for (const decision of ["deny", "cancel_task"] as const) {
      expect(permissionReply(permissionParams, { decision, granted_permission_ids: ["network"] })).toEqual({
        permissions: {},
        scope: "turn"
      })
    }
  })
})

describe("questions", () => {
  const params: ToolRequestUserInputParams = {
    threadId: "th",
    turnId: "tu",
    itemId: "i",
    isBlocking: true,
    autoResolutionMs: null,
    questions: [
      {
        id: "color",
        header: "Color",
        question: "Which color?",
        isOther: false,
        isSecret: false,
        options: [
          { label: "Blue", description: "" },
          { label: "Red", description: "warm" }
        ]
      },
      { id: "name", header: "", question: "Project name?", isOther: false, isSecret: false, options: null }
    ]
  }

  it("options get opt_<q>_<o> ids; free text when isOther or without options; never multi-select", () => {
    expect(questionPayload(params)).toEqual({
      questions: [
        {
          question_id: "color",
          prompt: "Color: Which color?",
          options: [
            { option_id: "opt_0_0", label: "Blue" },
            { option_id: "opt_0_1", label: "Red", description: "warm" }
          ],
          multi_select: false,
          allow_free_text: false
        },
        {
          question_id: "name",
          prompt: "Project name?",
          options: [],
          multi_select: false,
          allow_free_text: true
        }
      ]
    })
  })

  it("answers go back as labels then the free text, by question id", () => {
    expect(
      questionReply(params, {
        answers: [
          { question_id: "color", selected_option_ids: ["opt_0_1"] },
          { question_id: "name", selected_option_ids: [], text: "  serverfs " }
        ]
      })
    ).toEqual({ answers: { color: { answers: ["Red"] }, name: { answers: ["serverfs"] } } })
  })

  it("a secret question is never relayed", () => {
    const secret = {
      ...params,
      questions: [
        { id: "token", header: "", question: "API token?", isOther: true, isSecret: true, options: null }
      ]
    }
    expect(questionPayload(secret)).toBeUndefined()
  })
})

describe("progress", () => {
  it("the final text: the last final_answer, else the last message, else empty", () => {
    expect(
      finalTextOf([
        { id: "1", text: "a", phase: "final_answer" },
        { id: "2", text: "b", phase: "commentary" }
      ])
    ).toBe("a")
    expect(
      finalTextOf([
        { id: "1", text: "a", phase: null },
        { id: "2", text: "b", phase: "commentary" }
      ])
    ).toBe("b")
    expect(finalTextOf([])).toBe("")
  })

  it("items: completed agent messages, commands and file changes with display paths; no user input", () => {
    const message = {
      type: "agentMessage",
      id: "m",
      text: "hi",
      phase: "final_answer",
      moderation: null,
      memoryCitation: null,
      delivery: null,
      questions: null
    } as ThreadItem
    expect(itemEvent(message, "started", R)).toBeUndefined()
    expect(itemEvent(message, "completed", R)).toEqual({
      type: "agent.message",
      payload: { text: "hi", phase: "final_answer" }
    })
    const command = {
      type: "commandExecution",
      id: "c",
      pluginId: null,
      scriptPath: null,
      command: `ls ${ROOT}/src`,
      cwd: ROOT,
      processId: null,
      source: "agent",
      status: "inProgress",
      commandActions: [],
      aggregatedOutput: "secret output",
      exitCode: null,
      durationMs: null
    } as ThreadItem
    expect(itemEvent(command, "started", R)).toEqual({
      type: "item.started",
      payload: { type: "commandExecution", command: "ls src", cwd: "", status: "inProgress" }
    })
    const change = {
      type: "fileChange",
      id: "f",
      status: "completed",
      changes: [{ path: `${ROOT}/a.ts`, kind: { type: "update", move_path: null }, diff: "+x" }]
    } as ThreadItem
    expect(itemEvent(change, "completed", R)).toEqual({
      type: "item.completed",
      payload: { type: "fileChange", status: "completed", changes: [{ path: "a.ts", kind: "update" }] }
    })
    const user = { type: "userMessage", id: "u", clientId: null, content: [] } as ThreadItem
    expect(itemEvent(user, "completed", R)).toBeUndefined()
  })
})

describe("provider failures are redacted before they become the task's error", () => {
  const HOME = "/home/alice/.codex/sessions/2026/rollout.jsonl"
  const TEMP = "/tmp/codex-41/app-server.sock"
  const leaks = (message: string) => [ROOT, "/home/alice", "/tmp/"].filter((p) => message.includes(p))

  it("a failed turn's text naming the workdir, a home directory and a temp path → AGENT_PROVIDER_ERROR without them", () => {
    const error = turnFailure(R, `apply_patch failed in ${ROOT}/src/a.ts (see ${HOME}; socket ${TEMP})`)
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(leaks(error.message)).toEqual([])
    expect(error.message).toBe("apply_patch failed in <workdir>/src/a.ts (see <path>; socket <path>)")
  })

  it("a refused request's JSON-RPC error text is redacted the same way", () => {
    const error = requestFailure(
      R,
      "turn/start",
      new CodexRpcError({ method: "turn/start", code: -32000, message: `cwd ${ROOT} vs ${HOME} and ${TEMP}` })
    )
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(leaks(error.message)).toEqual([])
    expect(error.message).toBe("Codex refused turn/start: cwd <workdir> vs <path> and <path>")
  })
})
