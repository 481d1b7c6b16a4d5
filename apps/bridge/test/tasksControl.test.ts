/**
 * The task API of a running daemon (see tasks.test.ts): steering and cancel, continuation,
 * idempotency, correlation and the manifest.
 */
import { describe, expect, it } from "vitest"
import {
  allEvents,
  call,
  callCode,
  callError,
  callOutcome,
  eventTypes,
  getTask,
  submitParams,
  TERMINAL,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { nonTerminalTaskIds, plantTask } from "./support/store.js"
import { bytes, canonical, sha256, useTaskBridge } from "./support/taskApi.js"

const t = useTaskBridge()
const { c, submit, submitError, cancel, respond } = t

describe("steering and cancel", () => {
  /** task.message.send, retried while the scripted turn has not registered yet (bounded). */
  const steer = (taskId: string, message: string) =>
    waitUntil("the turn to accept a message", async () => {
      const code = await callCode(c(), "task.message.send", { task_id: taskId, message })
      if (code === "AGENT_TASK_NOT_ACTIVE") return undefined
      return code
    })

  it("a message steers the running turn: result steered=<msg>; the event records only its size", async () => {
    const { task_id } = await submit({ prompt: "steer:" })
    await waitForStatus(c(), task_id, "running")
    expect(await steer(task_id, "focus on the API layer")).toBe("OK")
    const done = await waitForStatus(c(), task_id, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe("steered=focus on the API layer")
    const events = await allEvents(c(), task_id)
    const message = events.filter((e) => e.event_type === "user.message")
    expect(message.map((e) => e.payload)).toEqual([{ bytes: bytes("focus on the API layer") }])
    expect(JSON.stringify(events)).not.toContain("focus on the API layer")
  })

  it("a message to a finished task is AGENT_TASK_TERMINAL; to a task this bridge does not drive, AGENT_TASK_NOT_ACTIVE", async () => {
    const { task_id } = await submit({ prompt: "complete:done" })
    await waitForStatus(c(), task_id, "succeeded")
    const terminal = await callError(c(), "task.message.send", { task_id, message: "more" })
    expect(terminal.code).toBe("AGENT_TASK_TERMINAL")
    expect(terminal.message).toContain("continue_from_task_id")

    // A running task left in the database by another process: no live turn here.
    const orphan = await plantTask(t.sandbox().stateDir, {
      status: "running",
      workdirAlias: "w4",
      slot: 4,
      profile: "review",
      sessionId: "fake-session-planted"
    })
    const notActive = await callError(c(), "task.message.send", { task_id: orphan, message: "hello" })
    expect(notActive.code).toBe("AGENT_TASK_NOT_ACTIVE")
    expect(await cancel(orphan)).toMatchObject({ status: "cancelled" })

    const unknown = await callError(c(), "task.message.send", {
      task_id: "agt_000000000000000000000000",
      message: "x"
    })
    expect(unknown.code).toBe("AGENT_TASK_NOT_FOUND")
  })

  it("cancel twice: the second returns the same status and changes nothing; cancel of a finished task returns its status", async () => {
    const { task_id } = await submit({ prompt: "wait:", profile: "workspace-write" })
    await waitForStatus(c(), task_id, "running")
    expect(await cancel(task_id)).toEqual({ task_id, status: "cancelled", correlation_id: null })
    const first = await getTask(c(), task_id)
    expect(await cancel(task_id)).toEqual({ task_id, status: "cancelled", correlation_id: null })
    const second = await getTask(c(), task_id)
    expect(second.updated_at).toBe(first.updated_at)
    expect(second.completed_at).toBe(first.completed_at)
    expect(eventTypes(await allEvents(c(), task_id)).filter((t) => t === "task.cancelled")).toHaveLength(1)

    const finished = await submit({ prompt: "complete:fine" })
    await waitForStatus(c(), finished.task_id, "succeeded")
    expect(await cancel(finished.task_id)).toEqual({
      task_id: finished.task_id,
      status: "succeeded",
      correlation_id: null
    })
    const after = await getTask(c(), finished.task_id)
    expect(after.status).toBe("succeeded")
    expect(after.final_response).toBe("fine")
    expect(eventTypes(await allEvents(c(), finished.task_id))).not.toContain("task.cancelled")
    expect((await callError(c(), "task.cancel", { task_id: "agt_000000000000000000000000" })).code).toBe(
      "AGENT_TASK_NOT_FOUND"
    )
  })
})

describe("continue_from_task_id", () => {
  it("same runtime and workdir: a new task resumes the recorded session", async () => {
    const first = await submit({ prompt: "complete:one" })
    await waitForStatus(c(), first.task_id, "succeeded")
    const next = await submit({ prompt: "complete:two", continue_from_task_id: first.task_id })
    expect(next.task_id).not.toBe(first.task_id)
    const done = await waitForStatus(c(), next.task_id, TERMINAL)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe("two")
    expect(done.continue_from_task_id).toBe(first.task_id)
    expect(done.manifest.continuation).toEqual({ from_task_id: first.task_id })
    const turn = (await allEvents(c(), next.task_id)).find((e) => e.event_type === "turn.started")
    expect(turn?.payload).toEqual({ continued: true })
    const firstTurn = (await allEvents(c(), first.task_id)).find((e) => e.event_type === "turn.started")
    expect(firstTurn?.payload).toEqual({})
    // The prior task is untouched.
    expect((await getTask(c(), first.task_id)).final_response).toBe("one")

    // A workspace-write task may continue as review (more restrictive).
    const ws = await submit({ prompt: "complete:ws", profile: "workspace-write" })
    await waitForStatus(c(), ws.task_id, "succeeded")
    const narrowed = await submit({ prompt: "complete:narrowed", continue_from_task_id: ws.task_id })
    expect((await waitForStatus(c(), narrowed.task_id, TERMINAL)).status).toBe("succeeded")
  })

  it("another workdir, a prior task not finished, an unknown prior task, or review → workspace-write are refused", async () => {
    const done = await submit({ prompt: "complete:base" })
    await waitForStatus(c(), done.task_id, "succeeded")
    expect(
      (await submitError({ prompt: "complete:x", workdir: "w4", continue_from_task_id: done.task_id })).code
    ).toBe("AGENT_SESSION_NOT_RESUMABLE")
    const busy = await submit({ prompt: "wait:" })
    await waitForStatus(c(), busy.task_id, "running")
    expect((await submitError({ prompt: "complete:x", continue_from_task_id: busy.task_id })).code).toBe(
      "AGENT_SESSION_NOT_RESUMABLE"
    )
    await cancel(busy.task_id)
    expect(
      (await submitError({ prompt: "complete:x", continue_from_task_id: "agt_000000000000000000000000" }))
        .code
    ).toBe("AGENT_TASK_NOT_FOUND")
    expect(
      (
        await submitError({
          prompt: "complete:x",
          profile: "workspace-write",
          continue_from_task_id: done.task_id
        })
      ).code
    ).toBe("AGENT_PROFILE_NOT_ALLOWED")
  })
})

describe("idempotency and correlation", () => {
  it("same key and request → the same task and its current status; another request → AGENT_IDEMPOTENCY_CONFLICT", async () => {
    const input = { prompt: "wait:", idempotency_key: "key-1" }
    const first = await submit(input)
    expect(first).toMatchObject({ status: "queued", idempotency_key: "key-1" })
    await waitForStatus(c(), first.task_id, "running")
    expect(await submit(input)).toEqual({
      task_id: first.task_id,
      status: "running",
      correlation_id: null,
      idempotency_key: "key-1"
    })
    expect((await submitError({ prompt: "wait:\n", idempotency_key: "key-1" })).code).toBe(
      "AGENT_IDEMPOTENCY_CONFLICT"
    )
    expect((await submitError({ ...input, workdir: "w4" })).code).toBe("AGENT_IDEMPOTENCY_CONFLICT")
    // correlation_id is never used for idempotency (spec v0.7 §2.1): a retry carrying another one
    // is the same request, answered with the original task (and its correlation id).
    expect(await submit({ ...input, correlation_id: "retry-2" })).toEqual({
      task_id: first.task_id,
      status: "running",
      correlation_id: null,
      idempotency_key: "key-1"
    })
    await cancel(first.task_id)
    expect(await submit(input)).toMatchObject({ task_id: first.task_id, status: "cancelled" })
    const view = await getTask(c(), first.task_id)
    expect(view.idempotency_key).toBe("key-1")
    expect(view.manifest.idempotency_key).toBe("key-1")

    for (const key of ["", "k".repeat(257), "bad\nkey"]) {
      expect((await submitError({ prompt: "complete:x", idempotency_key: key })).code).toBe("INVALID_REQUEST")
    }
  })

  it.each(["review", "workspace-write"])(
    "concurrent identical %s submissions with one key create one task",
    async (profile) => {
      const key = `concurrent-${profile}`
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          callOutcome(
            c(),
            "task.submit",
            submitParams({ prompt: "wait:", profile, idempotency_key: key }, "w1")
          )
        )
      )
      const failures = results.filter((r) => r.ok === false)
      expect(failures, JSON.stringify(failures)).toEqual([])
      const ids = new Set(results.map((r) => (r.ok ? r.value.task_id : "")))
      expect(ids.size).toBe(1)
      const [taskId] = [...ids]
      if (taskId === undefined) throw new Error("no task")
      const live = await nonTerminalTaskIds(t.sandbox().stateDir)
      expect(live).toContain(taskId)
      await cancel(taskId)
      await waitUntil("the lease to be released", async () =>
        (await callCode(c(), "task.submit", submitParams({ prompt: "complete:probe", profile }, "w1"))) ===
        "OK"
          ? true
          : undefined
      )
    }
  )

  it("correlation_id is on the submit result, task.get, every event envelope, the manifest and every answer", async () => {
    const correlation = "corr-Ünïcode-€-42"
    const submitted = await submit({ prompt: "say:hello\napproval:go", correlation_id: correlation })
    expect(submitted.correlation_id).toBe(correlation)
    const view = await waitForStatus(c(), submitted.task_id, "waiting_for_approval")
    expect(view.correlation_id).toBe(correlation)
    expect(view.manifest.correlation_id).toBe(correlation)
    const pending = view.pending_request
    if (pending === undefined) throw new Error("no request")
    const resolved = await respond(submitted.task_id, pending.request_id, "approve_once")
    expect(resolved.correlation_id).toBe(correlation)
    await waitForStatus(c(), submitted.task_id, "succeeded")
    const page = await call(c(), "task.events", { task_id: submitted.task_id })
    expect(page.correlation_id).toBe(correlation)
    expect(page.events.length).toBeGreaterThanOrEqual(6)
    for (const e of page.events) expect(e.correlation_id).toBe(correlation)
    expect((await cancel(submitted.task_id)).correlation_id).toBe(correlation)

    const steerTask = await submit({ prompt: "steer:", correlation_id: correlation })
    await waitForStatus(c(), steerTask.task_id, "running")
    const sent = await waitUntil("the steer to be accepted", async () => {
      const r = await callOutcome(c(), "task.message.send", { task_id: steerTask.task_id, message: "m" })
      return r.ok ? r.value : undefined
    })
    expect(sent.correlation_id).toBe(correlation)
    await waitForStatus(c(), steerTask.task_id, "succeeded")

    // Exactly 256 bytes is accepted; 257 bytes, 258 bytes of 86 characters, control characters are not.
    const ok = await submit({ prompt: "complete:x", correlation_id: "c".repeat(256) })
    expect(ok.correlation_id).toBe("c".repeat(256))
    for (const bad of ["c".repeat(257), "€".repeat(86), "tab\there", "bell\u0007", "del\u007f", "nl\n"]) {
      const e = await submitError({ prompt: "complete:x", correlation_id: bad })
      expect(e.code, JSON.stringify(bad)).toBe("INVALID_REQUEST")
    }
  })

  it("manifest_sha256 is the SHA-256 of the manifest's canonical JSON; the manifest holds no host path", async () => {
    const { task_id } = await submit({ prompt: "complete:m", path: "docs", correlation_id: "m-1" })
    const view = await waitForStatus(c(), task_id, "succeeded")
    expect(view.manifest_sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(sha256(canonical(view.manifest))).toBe(view.manifest_sha256)
    expect(view.manifest).toMatchObject({
      schema_version: 2,
      protocol_version: 1,
      runtime: { name: "fake", version: "scripted-1", in_flight_recovery: "none" },
      workspace: { alias: "w1", slot: 1, relative_cwd: "docs", profile: "review" },
      policy: {
        read_only: false,
        agent_mode: "workspace-write",
        policy_sha256: expect.stringMatching(/^[0-9a-f]{64}$/)
      },
      continuation: { from_task_id: null },
      correlation_id: "m-1",
      idempotency_key: null,
      deadline_at: view.deadline_at
    })
    expect(view.manifest.limits).toMatchObject({
      max_prompt_bytes: 65_536,
      max_message_bytes: 65_536,
      max_events_per_task: 10_000,
      max_active_tasks: 50,
      result_spool_threshold_bytes: 262_144
    })
    expect(JSON.stringify(view.manifest)).not.toContain(t.sandbox().base)
    expect(JSON.stringify(view)).not.toContain(t.sandbox().base)
    // Same workdir policy, same policy hash; a different workdir policy, another hash.
    const other = await submit({ prompt: "complete:n", workdir: "w4" })
    const otherView = await waitForStatus(c(), other.task_id, "succeeded")
    expect(sha256(canonical(otherView.manifest))).toBe(otherView.manifest_sha256)
    expect(otherView.manifest.policy.policy_sha256).not.toBe(view.manifest.policy.policy_sha256)
  })
})

t.checkDaemonOutput()
