/**
 * Every limit's code on a running daemon, through the real RPC client (spec v0.3 §23, v0.7
 * §2.2/§2.5, bridge-internals §3/§4): prompt, message, result and event limits, the result
 * spool and its exact retrieval, the active-task cap, interaction expiry and the task deadline
 * (daemons started with shrunk limits), and an allowlisted runtime the bridge does not run.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { BridgeClientService } from "@serverfs/rpc"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  allEvents,
  assertBuilt,
  type Bridge,
  call,
  callCode,
  callError,
  eventTypes,
  getTask,
  killAll,
  makeSandbox,
  modeOf,
  type Sandbox,
  type SubmitInput,
  startBridge,
  stderrRecords,
  submitParams,
  TERMINAL,
  waitForStatus,
  waitUntil
} from "./support/daemon.js"
import { flockFree } from "./support/mcpSide.js"
import { nonTerminalTaskIds, spoolFile } from "./support/store.js"

const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")
const bytes = (text: string) => Buffer.byteLength(text, "utf8")

/** What `large:<n>` produces (ScriptedCommand): "aé€" repeated, padded with "a", exactly n bytes. */
const largeText = (n: number) => "aé€".repeat(Math.floor(n / 6)) + "a".repeat(n - Math.floor(n / 6) * 6)

let sandbox: Sandbox
let bridge: Bridge
const c = (): BridgeClientService => bridge.client

beforeAll(async () => {
  assertBuilt()
  sandbox = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
  bridge = await startBridge(sandbox.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "50" }))
}, 60_000)

afterAll(async () => {
  await killAll()
  sandbox?.remove()
})

const submit = (input: SubmitInput) => call(c(), "task.submit", submitParams(input, "w1"))
const submitError = (input: SubmitInput) => callError(c(), "task.submit", submitParams(input, "w1"))
const cancel = (taskId: string) => call(c(), "task.cancel", { task_id: taskId })

const respond = (taskId: string, requestId: string, decision: string) =>
  call(c(), "task.approval.respond", { task_id: taskId, request_id: requestId, decision })

describe("the event limit", () => {
  it("events:10001 → the task still ends; events past 10000 are dropped (AGENT_EVENT_LIMIT_REACHED), not fatal; other calls are answered meanwhile", async () => {
    const { task_id } = await submit({ prompt: "events:10001\ncomplete:after the flood" })
    // While the provider streams, the bridge keeps answering (each call would otherwise fail
    // with AGENT_BRIDGE_UNAVAILABLE after the client's 30 s).
    const other = await submit({ prompt: "approval:meanwhile" })
    const asking = await waitForStatus(c(), other.task_id, "waiting_for_approval")
    await respond(other.task_id, asking.pending_request?.request_id ?? "", "approve_once")
    expect((await waitForStatus(c(), other.task_id, TERMINAL)).final_response).toBe("approval=approve_once")
    expect((await getTask(c(), task_id)).status).not.toBe("failed")
    const done = await waitForStatus(c(), task_id, TERMINAL, 170_000, 250)
    expect(done.status).toBe("succeeded")
    expect(done.final_response).toBe("after the flood")
    const events = await allEvents(c(), task_id)
    expect(events).toHaveLength(10_000)
    expect(new Set(events.map((e) => e.event_id)).size).toBe(10_000)
    expect(events[0]?.event_type).toBe("task.started")
    expect(events[9_999]).toMatchObject({ event_type: "agent.message", payload: { text: "message 9998" } })
    expect(eventTypes(events)).not.toContain("task.completed")
    const dropped = stderrRecords(bridge.stderr()).filter(
      (r) => r.event === "event_dropped" && r.task_id === task_id
    )
    expect(dropped.length).toBe(4)
    for (const r of dropped) expect(r.error_code).toBe("AGENT_EVENT_LIMIT_REACHED")
  }, 200_000)
})

describe("limits", () => {
  it("a prompt over 65536 bytes is AGENT_PROMPT_TOO_LARGE; 65536 bytes is accepted", async () => {
    const fits = `complete:${"x".repeat(65_536 - 9)}`
    expect(bytes(fits)).toBe(65_536)
    const ok = await submit({ prompt: fits })
    expect((await waitForStatus(c(), ok.task_id, "succeeded")).final_response).toBe("x".repeat(65_527))
    const tooLarge = await submitError({ prompt: `${fits}y` })
    expect(tooLarge.code).toBe("AGENT_PROMPT_TOO_LARGE")
    // Bytes, not characters.
    const multibyte = `complete:${"€".repeat(21_843)}`
    expect(bytes(multibyte)).toBe(65_538)
    expect((await submitError({ prompt: multibyte })).code).toBe("AGENT_PROMPT_TOO_LARGE")
  })

  it("a message over 65536 bytes is AGENT_MESSAGE_TOO_LARGE and does not steer", async () => {
    const { task_id } = await submit({ prompt: "steer:" })
    await waitForStatus(c(), task_id, "running")
    const e = await callError(c(), "task.message.send", { task_id, message: "m".repeat(65_537) })
    expect(e.code).toBe("AGENT_MESSAGE_TOO_LARGE")
    const fits = "é".repeat(32_768)
    const accepted = await waitUntil("the steer", async () => {
      const code = await callCode(c(), "task.message.send", { task_id, message: fits })
      return code === "AGENT_TASK_NOT_ACTIVE" ? undefined : code
    })
    expect(accepted).toBe("OK")
    expect((await waitForStatus(c(), task_id, TERMINAL)).final_response).toBe(`steered=${fits}`)
  })

  it("a result over 8 MiB fails the task with AGENT_RESULT_TOO_LARGE; exactly 8 MiB is spooled", async () => {
    const { task_id } = await submit({ prompt: "large:8388609" })
    const failed = await waitForStatus(c(), task_id, TERMINAL, 60_000)
    expect(failed.status).toBe("failed")
    expect(failed.error_code).toBe("AGENT_RESULT_TOO_LARGE")
    expect(failed.final_response).toBeNull()
    expect(failed.result).toBeNull()
    expect(fs.existsSync(spoolFile(sandbox.stateDir, task_id))).toBe(false)
    expect(
      (await allEvents(c(), task_id)).filter((e) => e.event_type === "task.failed").map((e) => e.payload)
    ).toEqual([{ error_code: "AGENT_RESULT_TOO_LARGE" }])

    const max = await submit({ prompt: "large:8388608" })
    const spooled = await waitForStatus(c(), max.task_id, TERMINAL, 60_000)
    expect(spooled.status).toBe("succeeded")
    expect(spooled.result).toEqual({
      storage: "spool",
      size_bytes: 8_388_608,
      sha256: sha256(largeText(8_388_608)),
      retrievable: true
    })
    expect(fs.statSync(spoolFile(sandbox.stateDir, max.task_id)).size).toBe(8_388_608)
  }, 120_000)

  it("a spooled result: a bounded preview on task.get, exact bytes chunk by chunk through task.result.read", async () => {
    const expected = largeText(300_000)
    const expectedBytes = Buffer.from(expected, "utf8")
    expect(expectedBytes.length).toBe(300_000)
    const { task_id } = await submit({ prompt: "large:300000" })
    const view = await waitForStatus(c(), task_id, TERMINAL)
    expect(view.status).toBe("succeeded")
    expect(view.final_response_truncated).toBe(true)
    expect(view.result).toEqual({
      storage: "spool",
      size_bytes: 300_000,
      sha256: sha256(expectedBytes),
      retrievable: true
    })
    const preview = view.final_response ?? ""
    expect(bytes(preview)).toBeLessThanOrEqual(65_536)
    expect(bytes(preview)).toBeGreaterThan(65_536 - 3)
    expect(expected.startsWith(preview)).toBe(true)
    const events = await allEvents(c(), task_id)
    expect(events.find((e) => e.event_type === "task.result_spooled")?.payload).toEqual({
      size_bytes: 300_000,
      sha256: sha256(expectedBytes)
    })
    expect(events.find((e) => e.event_type === "task.completed")?.payload).toEqual({
      result_storage: "spool",
      result_size_bytes: 300_000
    })
    const file = spoolFile(sandbox.stateDir, task_id)
    expect(modeOf(file)).toBe(0o600)
    expect(modeOf(path.dirname(file))).toBe(0o700)

    for (const max of [undefined, 65_536, 1_000, 7]) {
      const chunks: Array<Buffer> = []
      let offset = 0
      for (let guard = 0; guard < 100_000; guard++) {
        const chunk = await call(c(), "task.result.read", {
          task_id,
          offset_bytes: offset,
          ...(max === undefined ? {} : { max_bytes: max })
        })
        expect(chunk.offset_bytes).toBe(offset)
        const piece = Buffer.from(chunk.text, "utf8")
        expect(piece.length).toBeLessThanOrEqual(max ?? 65_536)
        expect(chunk.next_offset_bytes).toBe(offset + piece.length)
        chunks.push(piece)
        offset = chunk.next_offset_bytes
        if (chunk.eof) break
        expect(piece.length).toBeGreaterThan(0)
        if (max === 7 && offset > 700) break
      }
      const joined = Buffer.concat(chunks)
      if (max === 7) {
        expect(expectedBytes.subarray(0, joined.length).equals(joined)).toBe(true)
        continue
      }
      expect(joined.length).toBe(300_000)
      expect(joined.equals(expectedBytes)).toBe(true)
      expect(sha256(joined)).toBe(view.result?.sha256)
    }
    const end = await call(c(), "task.result.read", { task_id, offset_bytes: 300_000 })
    expect(end).toMatchObject({ text: "", offset_bytes: 300_000, next_offset_bytes: 300_000, eof: true })

    // Offsets 2 and 4 fall inside "é" and "€".
    for (const offset of [2, 4, 5, 300_001, -1]) {
      const e = await callError(c(), "task.result.read", { task_id, offset_bytes: offset })
      expect(e.code, String(offset)).toBe("INVALID_RESULT_OFFSET")
    }
    for (const max of [65_537, 0, -5]) {
      const e = await callError(c(), "task.result.read", { task_id, max_bytes: max })
      expect(e.code, String(max)).toBe("INVALID_RESULT_LIMIT")
    }

    const inline = await submit({ prompt: "complete:small" })
    await waitForStatus(c(), inline.task_id, "succeeded")
    expect((await callError(c(), "task.result.read", { task_id: inline.task_id })).code).toBe(
      "AGENT_RESULT_NOT_RETRIEVABLE"
    )
    const running = await submit({ prompt: "wait:" })
    expect((await callError(c(), "task.result.read", { task_id: running.task_id })).code).toBe(
      "AGENT_RESULT_NOT_RETRIEVABLE"
    )
    await cancel(running.task_id)
  })
})

describe("with the scripted runtime allowlisted but not enabled in the bridge", () => {
  let bare: Bridge
  let box: Sandbox
  beforeAll(async () => {
    box = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    bare = await startBridge(box.env({ SERVERFS_AGENT_ENABLE_FAKE_RUNTIME: "false" }))
  }, 60_000)
  afterAll(async () => {
    await bare?.stop()
    box?.remove()
  })

  it("an allowlisted runtime the bridge does not run is AGENT_RUNTIME_UNAVAILABLE, and is not listed", async () => {
    expect((await call(bare.client, "runtime.list", {})).runtimes).toEqual([])
    for (const profile of ["review", "workspace-write"]) {
      const e = await callError(
        bare.client,
        "task.submit",
        submitParams({ prompt: "complete:x", profile }, "w1")
      )
      expect(e.code, profile).toBe("AGENT_RUNTIME_UNAVAILABLE")
    }
    expect(await nonTerminalTaskIds(box.stateDir)).toEqual([])
    expect(flockFree(box.lockDir, 1)).toBe(true)
  })
})

// ---- daemons with shrunk limits ----------------------------------------------------------------

describe("with SERVERFS_AGENT_MAX_ACTIVE_TASKS=2, INTERACTION_TIMEOUT=1 s, SPOOL_THRESHOLD=1000", () => {
  let small: Bridge
  let box: Sandbox
  beforeAll(async () => {
    box = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    small = await startBridge(
      box.env({
        SERVERFS_AGENT_MAX_ACTIVE_TASKS: "2",
        SERVERFS_AGENT_INTERACTION_TIMEOUT_SECONDS: "1",
        SERVERFS_AGENT_RESULT_SPOOL_THRESHOLD_BYTES: "1000"
      })
    )
  }, 60_000)
  afterAll(async () => {
    await small?.stop()
    box?.remove()
  })

  it("a third active task is AGENT_TASK_LIMIT_REACHED until one ends", async () => {
    const s = small.client
    const a = await call(s, "task.submit", submitParams({ prompt: "wait:" }, "w1"))
    const b = await call(s, "task.submit", submitParams({ prompt: "wait:" }, "w1"))
    const e = await callError(s, "task.submit", submitParams({ prompt: "complete:x" }, "w1"))
    expect(e.code).toBe("AGENT_TASK_LIMIT_REACHED")
    expect(await nonTerminalTaskIds(box.stateDir)).toHaveLength(2)
    await call(s, "task.cancel", { task_id: a.task_id })
    const c3 = await call(s, "task.submit", submitParams({ prompt: "complete:x" }, "w1"))
    expect((await waitForStatus(s, c3.task_id, TERMINAL)).status).toBe("succeeded")
    await call(s, "task.cancel", { task_id: b.task_id })
  })

  it("results over the spool threshold are spooled with a preview of at most the threshold", async () => {
    const s = small.client
    const inline = await call(s, "task.submit", submitParams({ prompt: "large:1000" }, "w1"))
    expect((await waitForStatus(s, inline.task_id, TERMINAL)).result?.storage).toBe("inline")
    const { task_id } = await call(s, "task.submit", submitParams({ prompt: "large:1001" }, "w1"))
    const view = await waitForStatus(s, task_id, TERMINAL)
    expect(view.result).toMatchObject({ storage: "spool", size_bytes: 1001, retrievable: true })
    expect(bytes(view.final_response ?? "")).toBeLessThanOrEqual(1000)
    expect(largeText(1001).startsWith(view.final_response ?? "x")).toBe(true)
    const chunk = await call(s, "task.result.read", { task_id })
    expect(chunk).toMatchObject({ text: largeText(1001), eof: true, next_offset_bytes: 1001 })
  })

  it.each([
    ["approval", "approval:never answered", "approval.requested"],
    ["question", "question:never answered", "question.requested"]
  ])(
    "an unanswered %s expires: AGENT_INTERACTION_TIMED_OUT, interaction.expired + task.interrupted, a late answer is REQUEST_STALE",
    async (kind, prompt, requested) => {
      const s = small.client
      const { task_id } = await call(
        s,
        "task.submit",
        submitParams({ prompt: `${prompt}\nwrite:late.txt=1` }, "w1")
      )
      const done = await waitForStatus(s, task_id, TERMINAL)
      expect(done.status).toBe("interrupted")
      expect(done.error_code).toBe("AGENT_INTERACTION_TIMED_OUT")
      expect(done.pending_request_id).toBeNull()
      const events = await allEvents(s, task_id)
      const ask = events.find((e) => e.event_type === requested)
      const requestId = ask?.payload.request_id as string
      const expiresAt = Date.parse(ask?.payload.expires_at as string)
      // expires_at = the moment of the request + 1 s, stamped before its event was appended.
      expect(expiresAt - Date.parse(ask?.created_at ?? "")).toBeLessThanOrEqual(1_000)
      expect(expiresAt).toBeGreaterThan(Date.parse(done.created_at))
      expect(expiresAt).toBeLessThan(Date.parse(done.deadline_at))
      const types = eventTypes(events)
      const expired = events.find((e) => e.event_type === "interaction.expired")
      expect(expired?.payload).toEqual({ request_id: requestId, kind })
      expect(events.filter((e) => e.event_type === "task.interrupted").map((e) => e.payload)).toEqual([
        { error_code: "AGENT_INTERACTION_TIMED_OUT" }
      ])
      expect(types.indexOf("interaction.expired")).toBeLessThan(types.indexOf("task.interrupted"))
      expect(fs.existsSync(path.join(box.workdir("w1"), "late.txt"))).toBe(false)
      const late =
        kind === "approval"
          ? await callError(s, "task.approval.respond", {
              task_id,
              request_id: requestId,
              decision: "approve_once"
            })
          : await callError(s, "task.question.answer", {
              task_id,
              request_id: requestId,
              answers: [{ question_id: "q1", selected_option_ids: ["a"] }]
            })
      expect(late.code).toBe("REQUEST_STALE")
      // The workspace lease was released with the turn.
      const next = await call(
        s,
        "task.submit",
        submitParams({ prompt: "complete:next", profile: "workspace-write" }, "w1")
      )
      expect((await waitForStatus(s, next.task_id, TERMINAL)).status).toBe("succeeded")
    }
  )
})

describe("with SERVERFS_AGENT_TASK_TIMEOUT_SECONDS=2", () => {
  let timed: Bridge
  let box: Sandbox
  beforeAll(async () => {
    box = makeSandbox([{ slot: 1, alias: "w1", mode: "workspace-write", runtimes: "fake" }])
    timed = await startBridge(box.env({ SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "2" }))
  }, 60_000)
  afterAll(async () => {
    await timed?.stop()
    box?.remove()
  })

  it("a turn past its deadline is interrupted with AGENT_TASK_TIMED_OUT and releases its lease", async () => {
    const s = timed.client
    const { task_id } = await call(
      s,
      "task.submit",
      submitParams({ prompt: "wait:", profile: "workspace-write" }, "w1")
    )
    const done = await waitForStatus(s, task_id, TERMINAL)
    expect(done.status).toBe("interrupted")
    expect(done.error_code).toBe("AGENT_TASK_TIMED_OUT")
    // Frozen at submission: submit time + 2 s (computed just before the row is inserted).
    expect(Date.parse(done.deadline_at) - Date.parse(done.created_at)).toBeLessThanOrEqual(2_000)
    expect(Date.parse(done.deadline_at)).toBeGreaterThan(Date.parse(done.created_at))
    expect(done.manifest.deadline_at).toBe(done.deadline_at)
    expect(Date.parse(done.completed_at ?? "")).toBeGreaterThanOrEqual(Date.parse(done.deadline_at))
    expect(
      (await allEvents(s, task_id)).filter((e) => e.event_type === "task.interrupted").map((e) => e.payload)
    ).toEqual([{ error_code: "AGENT_TASK_TIMED_OUT" }])
    await waitUntil("the lease to be free again", async () =>
      (await callCode(
        s,
        "task.submit",
        submitParams({ prompt: "complete:x", profile: "workspace-write" }, "w1")
      )) === "OK"
        ? true
        : undefined
    )
  })

  it("a pending request never expires after the deadline; at the deadline the task is AGENT_TASK_TIMED_OUT and a late answer REQUEST_STALE", async () => {
    const s = timed.client
    const { task_id } = await call(
      s,
      "task.submit",
      submitParams({ prompt: "approval:slow\nwrite:late.txt=1" }, "w1")
    )
    const done = await waitForStatus(s, task_id, TERMINAL)
    expect(done.status).toBe("interrupted")
    expect(done.error_code).toBe("AGENT_TASK_TIMED_OUT")
    const events = await allEvents(s, task_id)
    const ask = events.find((e) => e.event_type === "approval.requested")
    expect(ask?.payload.expires_at).toBe(done.deadline_at)
    expect(eventTypes(events)).not.toContain("interaction.expired")
    const late = await callError(s, "task.approval.respond", {
      task_id,
      request_id: ask?.payload.request_id as string,
      decision: "approve_once"
    })
    expect(late.code).toBe("REQUEST_STALE")
    expect(fs.existsSync(path.join(box.workdir("w1"), "late.txt"))).toBe(false)
  })
})
