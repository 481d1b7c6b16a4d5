/**
 * The task API of a running daemon (see tasks.test.ts): event cursors, authorization, start
 * paths, scripted writes and host-path redaction.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  allEvents,
  call,
  callError,
  getTask,
  type SubmitInput,
  TERMINAL,
  waitForStatus
} from "./support/daemon.js"
import { useTaskBridge } from "./support/taskApi.js"

const t = useTaskBridge()
const { c, submit, submitError, respond } = t

describe("events", () => {
  it("cursor pages are gap-free and duplicate-free; INVALID_LIMIT outside 1..500 or below cursor 0", async () => {
    const { task_id } = await submit({ prompt: "events:120" })
    await waitForStatus(c(), task_id, "succeeded")
    const whole = await call(c(), "task.events", { task_id, limit: 500 })
    expect(whole.events).toHaveLength(123)
    const ids = whole.events.map((e) => e.event_id)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    expect(whole.events.filter((e) => e.event_type === "agent.message").map((e) => e.payload)).toEqual(
      Array.from({ length: 120 }, (_, i) => ({ text: `message ${i + 1}` }))
    )

    const paged: Array<number> = []
    let cursor = 0
    for (;;) {
      const page = await call(c(), "task.events", { task_id, after_event_id: cursor, limit: 7 })
      expect(page.events.length).toBeLessThanOrEqual(7)
      if (page.events.length === 0) {
        expect(page.next_after_event_id).toBe(cursor)
        break
      }
      expect(page.next_after_event_id).toBe(page.events[page.events.length - 1]?.event_id)
      for (const e of page.events) expect(e.event_id).toBeGreaterThan(cursor)
      paged.push(...page.events.map((e) => e.event_id))
      cursor = page.next_after_event_id
    }
    expect(paged).toEqual(ids)
    // A cursor in the middle resumes right after it.
    const mid = ids[50] ?? 0
    const rest = await call(c(), "task.events", { task_id, after_event_id: mid, limit: 500 })
    expect(rest.events.map((e) => e.event_id)).toEqual(ids.slice(51))
    const past = await call(c(), "task.events", { task_id, after_event_id: 10 ** 9 })
    expect(past).toEqual({ correlation_id: null, events: [], next_after_event_id: 10 ** 9 })

    for (const params of [
      { limit: 0 },
      { limit: 501 },
      { limit: -1 },
      { after_event_id: -1 },
      { after_event_id: -1, limit: 10 }
    ]) {
      const e = await callError(c(), "task.events", { task_id, ...params })
      expect(e.code, JSON.stringify(params)).toBe("INVALID_LIMIT")
    }
    expect((await callError(c(), "task.events", { task_id: "agt_000000000000000000000000" })).code).toBe(
      "AGENT_TASK_NOT_FOUND"
    )
  })
})

describe("authorization and paths", () => {
  it("each refusal has its code", async () => {
    const cases: ReadonlyArray<readonly [string, SubmitInput]> = [
      ["WORKDIR_NOT_FOUND", { prompt: "complete:x", workdir: "nope" }],
      ["AGENT_DISABLED", { prompt: "complete:x", workdir: "w3" }],
      ["AGENT_RUNTIME_NOT_ALLOWED", { prompt: "complete:x", workdir: "w2" }],
      ["AGENT_RUNTIME_NOT_ALLOWED", { prompt: "complete:x", runtime: "claude" }],
      ["AGENT_RUNTIME_NOT_ALLOWED", { prompt: "complete:x", runtime: "bogus" }],
      ["AGENT_PROFILE_NOT_ALLOWED", { prompt: "complete:x", workdir: "w4", profile: "workspace-write" }],
      ["AGENT_PROFILE_NOT_ALLOWED", { prompt: "complete:x", profile: "admin" }],
      [
        "AGENT_PROFILE_NOT_ALLOWED",
        { prompt: "complete:x", workdir: "w2", runtime: "codex", profile: "review" }
      ]
    ]
    for (const [code, input] of cases)
      expect((await submitError(input)).code, JSON.stringify(input)).toBe(code)
  })

  it("INVALID_WORKDIR_PATH for escapes, absolute, hidden, denied, symlinked and non-directory paths; WORKDIR_PATH_NOT_FOUND", async () => {
    const invalid = [
      "..",
      "docs/../..",
      "/etc",
      "/",
      ".hidden",
      "private",
      "docs\\x",
      "file.txt",
      "link",
      "a\u0000b"
    ]
    for (const p of invalid) {
      const e = await submitError({ prompt: "complete:x", path: p })
      expect(e.code, JSON.stringify(p)).toBe("INVALID_WORKDIR_PATH")
      expect(e.message).not.toContain(t.sandbox().base)
    }
    for (const p of ["missing", "docs/missing"]) {
      expect((await submitError({ prompt: "complete:x", path: p })).code, p).toBe("WORKDIR_PATH_NOT_FOUND")
    }
    const ok = await submit({ prompt: "complete:x", path: "sub/inner" })
    expect((await waitForStatus(c(), ok.task_id, "succeeded")).relative_cwd).toBe("sub/inner")
  })

  it("write: files land in the task's directory of the workdir", async () => {
    const { task_id } = await submit({
      prompt: "write:made.txt=hello world",
      path: "docs",
      profile: "workspace-write"
    })
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(fs.readFileSync(path.join(t.sandbox().workdir("w1"), "docs", "made.txt"), "utf8")).toBe(
      "hello world"
    )
    expect(
      (await allEvents(c(), task_id)).find((e) => e.event_type === "file_change.started")?.payload
    ).toEqual({
      path: "made.txt"
    })
  })

  it("host paths in agent text, approvals and results are redacted to <workdir>, nested workdirs first", async () => {
    const w1 = t.sandbox().workdir("w1")
    const nested = t.sandbox().workdir("nested")
    const w4 = t.sandbox().workdir("w4")
    const { task_id } = await submit({
      prompt: [
        `say:editing ${w1}/src/app.ts and ${nested}/deep.txt near ${w4}`,
        `approval:rm -rf ${w1}/build`,
        `complete:wrote ${w1}/out.txt`
      ].join("\n")
    })
    const view = await waitForStatus(c(), task_id, "waiting_for_approval")
    expect(view.pending_request?.payload).toMatchObject({ command_display: "rm -rf <workdir>/build" })
    const pending = view.pending_request
    if (pending === undefined) throw new Error("no request")
    await respond(task_id, pending.request_id, "approve_once")
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.final_response).toBe("wrote <workdir>/out.txt")
    const events = await allEvents(c(), task_id)
    expect(events.find((e) => e.event_type === "agent.message")?.payload).toEqual({
      text: "editing <workdir>/src/app.ts and <workdir>/deep.txt near <workdir>"
    })
    expect(JSON.stringify(events)).not.toContain(t.sandbox().base)
    expect(JSON.stringify(await getTask(c(), task_id))).not.toContain(t.sandbox().base)
  })
})

t.checkDaemonOutput()
