/**
 * The pure translations of the Claude adapter (no process): categories, the session grant,
 * decisions, question normalization and the answers mapping, error-text scrubbing.
 */
import { HostPathRedaction } from "@serverfs/domain"
import { describe, expect, it } from "vitest"
import {
  answersFor,
  approvalPayload,
  categoryOf,
  MAX_ERROR_TEXT,
  permissionResult,
  questionPayload,
  sessionGrant,
  turnFailure
} from "../../src/claude/ClaudeMapping.js"
import { childEnvironment, parseProcessTurnId } from "../../src/claude/ClaudeProcess.js"

/** A provider error text as the adapter redacts it (a turn in another workdir than the path named). */
const errorText = (message: string) => new HostPathRedaction("/elsewhere").message(message, MAX_ERROR_TEXT)

const where = { cwd: "/srv/work/sub", workdirRoot: "/srv/work" }

describe("Claude mapping", () => {
  it("categories", () => {
    expect(
      ["Bash", "Write", "Edit", "NotebookEdit", "WebFetch", "WebSearch", "mcp__x__y", "Read"].map(categoryOf)
    ).toEqual([
      "command",
      "file_change",
      "file_change",
      "file_change",
      "network_permission",
      "network_permission",
      "mcp_tool",
      "other"
    ])
  })

  it("the session grant: settings-file suggestions rewritten to the session, else nothing", () => {
    const grant = sessionGrant({
      suggestions: [
        {
          type: "addRules",
          rules: [{ toolName: "Bash", ruleContent: "python3 *" }],
          behavior: "allow",
          destination: "localSettings"
        },
        { type: "addDirectories", directories: ["/srv/work"], destination: "session" },
        { type: "addRules", rules: [{ toolName: "Bash" }], behavior: "deny", destination: "userSettings" },
        { type: "setMode", mode: "bypassPermissions", destination: "userSettings" }
      ]
    })
    expect(grant).toEqual([
      {
        type: "addRules",
        rules: [{ toolName: "Bash", ruleContent: "python3 *" }],
        behavior: "allow",
        destination: "session"
      },
      { type: "addDirectories", directories: ["/srv/work"], destination: "session" }
    ])
    expect(
      sessionGrant({ suggestions: [{ type: "addDirectories", directories: ["/a"], destination: "session" }] })
    ).toEqual([])
    expect(
      sessionGrant({
        suppressAlwaysAllowRule: true,
        suggestions: [
          { type: "addRules", rules: [{ toolName: "Bash" }], behavior: "allow", destination: "session" }
        ]
      })
    ).toEqual([])
  })

  it("an approval payload and the answers to Claude", () => {
    const input = { file_path: "/srv/work/sub/a.txt", content: "x" }
    const payload = approvalPayload("Write", input, { title: "Claude wants to write a.txt" }, where, false)
    expect(payload).toEqual({
      category: "file_change",
      title: "Claude wants to write a.txt",
      available_decisions: ["approve_once", "deny", "cancel_task"],
      relative_cwd: "sub",
      // The current file unknown (not read): no kind, the new content as the diff.
      file_changes: [
        {
          path: "sub/a.txt",
          diff: "--- a/sub/a.txt\n+++ b/sub/a.txt\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"
        }
      ],
      tool: "Write",
      tool_input: { file_path: "/srv/work/sub/a.txt" }
    })
    expect(approvalPayload("Write", input, {}, where, false, { _tag: "missing" }).file_changes).toEqual([
      {
        path: "sub/a.txt",
        kind: "add",
        diff: "--- /dev/null\n+++ b/sub/a.txt\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"
      }
    ])
    expect(
      approvalPayload("Write", input, {}, where, false, { _tag: "text", text: "y\nx" }).file_changes
    ).toEqual([
      {
        path: "sub/a.txt",
        kind: "update",
        diff: "--- a/sub/a.txt\n+++ b/sub/a.txt\n@@ -1,2 +1 @@\n-y\n x\n\\ No newline at end of file\n"
      }
    ])
    const multi = approvalPayload(
      "MultiEdit",
      {
        file_path: "sub/a.txt",
        edits: [
          { old_string: "a\n", new_string: "b\n" },
          { old_string: "c\n", new_string: "d\n", replace_all: true }
        ]
      },
      {},
      where,
      false
    )
    expect(multi.file_changes).toEqual([
      {
        path: "sub/sub/a.txt",
        kind: "update",
        diff: "--- a/sub/sub/a.txt\n+++ b/sub/sub/a.txt\n@@ -1 +1 @@\n-a\n+b\n@@ -1 +1 @@\n-c\n+d\n"
      }
    ])
    expect(multi.tool_input).toEqual({ file_path: "sub/a.txt", edits: [{}, { replace_all: true }] })
    const grant = sessionGrant({
      suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }]
    })
    const none = { granted_permission_ids: [] }
    expect(permissionResult(input, { decision: "approve_once", ...none }, grant)).toEqual({
      behavior: "allow",
      updatedInput: input
    })
    expect(permissionResult(input, { decision: "approve_session", ...none }, grant)).toEqual({
      behavior: "allow",
      updatedInput: input,
      updatedPermissions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }]
    })
    expect(permissionResult(input, { decision: "deny", ...none }, grant)).toMatchObject({ behavior: "deny" })
    expect(permissionResult(input, { decision: "cancel_task", ...none }, grant)).toMatchObject({
      behavior: "deny",
      interrupt: true
    })
  })

  it("questions: ids, options by label, and ambiguous input refused", () => {
    const parsed = questionPayload({
      questions: [
        {
          question: "Pick",
          header: "P",
          options: [{ label: "A", description: "a" }, { label: "B" }],
          multiSelect: true
        }
      ]
    })
    if (typeof parsed === "string") throw new Error(parsed)
    expect(parsed.payload.questions[0]).toEqual({
      question_id: "q0",
      prompt: "Pick",
      options: [
        { option_id: "A", label: "A", description: "a" },
        { option_id: "B", label: "B" }
      ],
      multi_select: true,
      allow_free_text: true
    })
    expect(
      answersFor(parsed.questions, {
        answers: [{ question_id: "q0", selected_option_ids: ["A", "B"], text: " more " }]
      })
    ).toEqual({ Pick: "A, B, more" })
    expect(questionPayload({ questions: [] })).toBe("AskUserQuestion without questions")
    expect(
      questionPayload({
        questions: [
          { question: "Q", options: [] },
          { question: "Q", options: [] }
        ]
      })
    ).toBe("duplicate questions")
    expect(
      questionPayload({ questions: [{ question: "Q", options: [{ label: "x" }, { label: "x" }] }] })
    ).toBe("duplicate option labels")
  })

  it("error texts lose their paths; the CLI environment loses ServerFS's variables", () => {
    expect(errorText("cannot open /srv/work/secret.txt: denied")).toBe("cannot open <path>: denied")
    expect(
      childEnvironment({
        PATH: "/bin",
        HOME: "/h",
        SERVERFS_AGENT_LOCK_DIR: "/l",
        WORKDIR_01_PATH: "/w",
        X: undefined
      })
    ).toEqual({
      PATH: "/bin",
      HOME: "/h"
    })
    expect(parseProcessTurnId("cli:1234:5678")).toEqual({ pid: 1234, ticks: "5678" })
    expect(parseProcessTurnId("cli:1:5")).toBeUndefined()
    expect(parseProcessTurnId(null)).toBeUndefined()
  })
})

describe("Claude failures are redacted before they become the task's error", () => {
  const ROOT = "/srv/work"
  const HOME = "/home/alice/.claude/projects/-srv-work/session.jsonl"
  const TEMP = "/tmp/claude-7/stdin.fifo"
  const redaction = new HostPathRedaction(ROOT)
  const leaks = (message: string) => [ROOT, "/home/alice", "/tmp/"].filter((p) => message.includes(p))
  const end = { cancelRequested: false, resumed: false, result: undefined, thrown: undefined, stderr: "" }

  it("an error result naming the workdir, a home directory and a temp path → AGENT_PROVIDER_ERROR without them", () => {
    const result = {
      _tag: "Error",
      errors: [`EACCES: ${ROOT}/secret.txt`, `cannot write ${HOME}`, `lost ${TEMP}`]
    } as const
    const error = turnFailure({ ...end, result }, redaction)
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(leaks(error.message)).toEqual([])
    expect(error.message).toBe(
      "Claude Code reported an error: EACCES: <workdir>/secret.txt; cannot write <path>; lost <path>"
    )
  })

  it("a CLI that died without a result: its thrown error and stderr are redacted and bounded", () => {
    const error = turnFailure(
      { ...end, thrown: new Error(`spawn failed in ${ROOT}`), stderr: `${HOME}: ${TEMP} ${"x".repeat(900)}` },
      redaction
    )
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(leaks(error.message)).toEqual([])
    expect(
      error.message.startsWith(
        "the Claude Code CLI ended without a result: spawn failed in <workdir> — <path>: <path> x"
      )
    ).toBe(true)
    expect(error.message.length).toBeLessThan(600)
  })
})
