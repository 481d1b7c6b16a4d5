import * as fs from "node:fs"
import { createRequire } from "node:module"
import {
  type AgentEvent,
  type AgentStack,
  readAllEvents,
  startAgentStack,
  waitForStatus
} from "@serverfs/testkit"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { eventually, expectNoHostPath, fails, ok, submit, waitForEnd } from "./support.js"

/**
 * A bridge crash (SIGKILL) with work in flight (spec v0.3 §19, v0.7 §2.3, bridge-internals
 * §9–§10): one workspace-write task waiting for an approval (main), one running a `wait:` turn
 * after writing a file (second), one whose script claims its provider may outlive the bridge
 * (`survive:`, third), and a finished review task. While the bridge is down the agent tools say
 * AGENT_BRIDGE_UNAVAILABLE and MCP mutations in the guarded workdirs fail closed with
 * WORKDIR_RECOVERY_REQUIRED. After a restart with the same environment the tasks are
 * interrupted (BRIDGE_RESTARTED), never re-run, the late answer is stale, every event seen
 * before is still there, mutations work again where the scripted run is proven stopped and stay
 * blocked where it is not, and the SQLite file is intact.
 */

// Real processes on a shared two-core machine: generous bounds, never timing assertions.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

interface SqliteDatabase {
  readonly prepare: (sql: string) => { readonly all: () => ReadonlyArray<Record<string, unknown>> }
  readonly close: () => void
}
type SqliteConstructor = new (
  file: string,
  options: { readonly readonly: boolean; readonly fileMustExist: boolean }
) => SqliteDatabase
const Database = createRequire(import.meta.url)("better-sqlite3") as SqliteConstructor

let stack: AgentStack

const ids = { approval: "", running: "", survivor: "", finished: "" }
let approvalRequest = ""
const before = new Map<string, ReadonlyArray<AgentEvent>>()
const viewsBefore = new Map<string, Record<string, unknown>>()

const RECOVERY = (alias: string) => `WORKDIR_RECOVERY_REQUIRED: ${alias} has unresolved Agent recovery state`
const UNAVAILABLE = "AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is unavailable"

beforeAll(async () => {
  stack = await startAgentStack({
    prefix: "serverfs-agent-crash-",
    setup: (tree) => {
      tree.file("notes.txt", "main notes\n")
      for (const name of ["second", "third"]) {
        fs.mkdirSync(`${tree.base}/${name}`)
        fs.writeFileSync(`${tree.base}/${name}/notes.txt`, `${name} notes\n`)
      }
    },
    env: (tree) => ({
      WORKDIR_02_ALIAS: "second",
      WORKDIR_02_PATH: `${tree.base}/second`,
      WORKDIR_02_READ_ONLY: "false",
      WORKDIR_02_AGENT_MODE: "workspace-write",
      WORKDIR_02_AGENT_RUNTIMES: "fake",
      WORKDIR_03_ALIAS: "third",
      WORKDIR_03_PATH: `${tree.base}/third`,
      WORKDIR_03_READ_ONLY: "false",
      WORKDIR_03_AGENT_MODE: "workspace-write",
      WORKDIR_03_AGENT_RUNTIMES: "fake"
    })
  })
})

afterAll(async () => {
  await stack?.stop()
})

const guard = (slot: number) => `${stack.env.SERVERFS_AGENT_LOCK_DIR}/active/${String(slot).padStart(2, "0")}`
const stateFile = () => `${stack.env.SERVERFS_AGENT_BRIDGE_STATE_DIR}/state.sqlite3`
const readyEvent = (id: string) =>
  eventually(`${id} ready`, async () =>
    (await readAllEvents(stack.client, id)).find((e) => e.payload.text === "ready")
  )

const tryCreate = (workdir: string, path: string) =>
  fails(stack.client, "create_text_file", { workdir, path, content: "x\n" })

const integrity = (): ReadonlyArray<Record<string, unknown>> => {
  const db = new Database(stateFile(), { readonly: true, fileMustExist: true })
  try {
    return [...db.prepare("PRAGMA integrity_check").all(), ...db.prepare("PRAGMA foreign_key_check").all()]
  } finally {
    db.close()
  }
}

describe("a bridge crash with tasks in flight", () => {
  it("before: a task waits for approval, one runs, one claims to survive, one has finished", async () => {
    ids.finished = await submit(stack.client, "complete:done before the crash", { profile: "review" })
    await waitForEnd(stack.client, ids.finished, ["succeeded"])
    ids.approval = await submit(stack.client, "say:ready\napproval:deploy\nwrite:after-approval.txt=1")
    ids.running = await submit(stack.client, "write:b-marker.txt=ran\nsay:ready\nwait:", {
      workdir: "second"
    })
    ids.survivor = await submit(stack.client, "survive:\nsay:ready\nwait:", { workdir: "third" })
    const waiting = await waitForStatus(stack.client, ids.approval, ["waiting_for_approval"])
    approvalRequest = (waiting.pending_request as { request_id: string }).request_id
    await readyEvent(ids.running)
    await readyEvent(ids.survivor)
    expect(fs.readFileSync(`${stack.tree.base}/second/b-marker.txt`, "utf8")).toBe("ran")
    for (const id of Object.values(ids)) {
      before.set(id, await readAllEvents(stack.client, id))
      viewsBefore.set(id, await ok(stack.client, "get_agent_task", { task_id: id }))
    }
    // Each workspace-write task published its recovery guard.
    for (const slot of [1, 2, 3]) expect(fs.existsSync(guard(slot))).toBe(true)
  })

  it("SIGKILL: agent tools say AGENT_BRIDGE_UNAVAILABLE; mutations fail closed (the guard outlives the kill)", async () => {
    await stack.bridge.kill("SIGKILL")
    expect(stack.bridge.running).toBe(false)
    for (const [tool, args] of [
      ["get_agent_task", { task_id: ids.approval }],
      [
        "respond_agent_approval",
        { task_id: ids.approval, request_id: approvalRequest, decision: "approve_once" }
      ],
      ["submit_agent_task", { runtime: "fake", workdir: "main", prompt: "complete:x", profile: "review" }],
      ["read_agent_task_events", { task_id: ids.running }],
      ["cancel_agent_task", { task_id: ids.running }],
      ["list_agent_runtimes", {}]
    ] as const) {
      expect((await fails(stack.client, tool, args)).text, tool).toBe(UNAVAILABLE)
    }
    // The flock died with the bridge; the persistent guard did not.
    for (const [alias, slot] of [
      ["main", 1],
      ["second", 2],
      ["third", 3]
    ] as const) {
      expect(fs.existsSync(guard(slot))).toBe(true)
      expect((await tryCreate(alias, "while-down.txt")).text).toBe(RECOVERY(alias))
    }
    const rev = (await ok(stack.client, "stat_file", { workdir: "main", path: "notes.txt" })).revision
    expect(
      (
        await fails(stack.client, "edit_text_file", {
          workdir: "main",
          path: "notes.txt",
          expected_revision: rev,
          edits: [{ old_text: "main", new_text: "edited" }]
        })
      ).text
    ).toBe(RECOVERY("main"))
    expect(fs.existsSync(`${stack.tree.root}/while-down.txt`)).toBe(false)
    expect(fs.readFileSync(`${stack.tree.root}/notes.txt`, "utf8")).toBe("main notes\n")
    // Reads need no lease.
    expect((await ok(stack.client, "read_text_file", { workdir: "main", path: "notes.txt" })).content).toBe(
      "main notes\n"
    )
    // The state survived the kill intact.
    expect(integrity()).toEqual([{ integrity_check: "ok" }])
    // Remove what the running task wrote: a re-run would write it again.
    fs.rmSync(`${stack.tree.base}/second/b-marker.txt`)
  })

  it("restart: the tasks are interrupted (BRIDGE_RESTARTED), never re-run, the late answer is stale", async () => {
    await stack.bridge.restart()
    for (const id of [ids.approval, ids.running, ids.survivor]) {
      const view = await ok(stack.client, "get_agent_task", { task_id: id })
      expect(view, id).toMatchObject({
        status: "interrupted",
        error_code: "BRIDGE_RESTARTED",
        pending_request_id: null,
        final_response: null
      })
      expect(typeof view.completed_at).toBe("string")
    }
    const late = await fails(stack.client, "respond_agent_approval", {
      task_id: ids.approval,
      request_id: approvalRequest,
      decision: "approve_once"
    })
    expect(late.code).toBe("REQUEST_STALE")
    // The finished task is untouched.
    expect(await ok(stack.client, "get_agent_task", { task_id: ids.finished })).toEqual(
      viewsBefore.get(ids.finished)
    )
    // Never re-run: one start per task, nothing written again, still interrupted.
    for (const id of [ids.approval, ids.running, ids.survivor]) {
      const list = await readAllEvents(stack.client, id)
      expect(
        list.filter((e) => e.event_type === "task.started"),
        id
      ).toHaveLength(1)
      expect(
        list.filter((e) => e.event_type === "turn.started"),
        id
      ).toHaveLength(1)
    }
    expect(fs.existsSync(`${stack.tree.base}/second/b-marker.txt`)).toBe(false)
    expect(fs.existsSync(`${stack.tree.root}/after-approval.txt`)).toBe(false)
    expect((await ok(stack.client, "get_agent_task", { task_id: ids.running })).status).toBe("interrupted")
  })

  it("no event or task is lost; reconciliation is recorded after them", async () => {
    for (const [id, seen] of before) {
      const after = await readAllEvents(stack.client, id)
      // Every event seen before the crash is still there, unchanged, in the same place.
      expect(after.slice(0, seen.length), id).toEqual(seen)
      const added = after.slice(seen.length)
      if (id === ids.finished) {
        expect(added).toEqual([])
        continue
      }
      expect(added.map((e) => e.event_type)).toEqual([
        "runtime.reconcile_started",
        "runtime.reconcile_finished",
        "task.interrupted",
        "task.reconciled"
      ])
      const finished = added[1]?.payload
      if (id === ids.survivor) {
        expect(finished).toEqual({ runtime: "fake", status: "UNKNOWN", provider_active: null })
      } else {
        expect(finished).toEqual({ runtime: "fake", status: "SESSION_RESUMABLE", provider_active: false })
      }
      expect(added[2]?.payload).toEqual({ error_code: "BRIDGE_RESTARTED" })
    }
  })

  it("mutations work again where the scripted run is proven stopped, and stay blocked for `survive:`", async () => {
    expect(fs.existsSync(guard(1))).toBe(false)
    expect(fs.existsSync(guard(2))).toBe(false)
    expect(fs.existsSync(guard(3))).toBe(true)
    for (const alias of ["main", "second"]) {
      const created = await ok(stack.client, "create_text_file", {
        workdir: alias,
        path: "after-restart.txt",
        content: "ok\n"
      })
      expect(created.created, alias).toBe(true)
    }
    expect((await tryCreate("third", "after-restart.txt")).text).toBe(RECOVERY("third"))
    expect(fs.existsSync(`${stack.tree.base}/third/after-restart.txt`)).toBe(false)
    // A new writer is refused there by the bridge too, verbatim; review tasks hold no lease.
    const refused = await fails(stack.client, "submit_agent_task", {
      runtime: "fake",
      workdir: "third",
      prompt: "complete:x"
    })
    expect(refused.text).toBe(RECOVERY("third"))
    const review = await submit(stack.client, "complete:reviewed", { workdir: "third", profile: "review" })
    expect((await waitForEnd(stack.client, review, ["succeeded"])).final_response).toBe("reviewed")
    // New writers elsewhere run normally, with the interrupted session continued explicitly.
    const next = await submit(stack.client, "complete:continued", { continue_from_task_id: ids.approval })
    expect(await waitForEnd(stack.client, next, ["succeeded"])).toMatchObject({
      final_response: "continued",
      continue_from_task_id: ids.approval
    })
  })

  it("after stopping the bridge the SQLite file passes integrity_check with every task in it", async () => {
    await stack.bridge.kill("SIGTERM")
    expect(integrity()).toEqual([{ integrity_check: "ok" }])
    const db = new Database(stateFile(), { readonly: true, fileMustExist: true })
    try {
      const stored = db.prepare("SELECT task_id, status FROM tasks").all()
      for (const id of Object.values(ids)) expect(stored.map((r) => r.task_id)).toContain(id)
      const events = db
        .prepare("SELECT event_id FROM events")
        .all()
        .map((r) => r.event_id as number)
      for (const seen of before.values()) for (const e of seen) expect(events).toContain(e.event_id)
    } finally {
      db.close()
    }
  })

  it("no host path in anything the client received", () => {
    expectNoHostPath(stack)
  })
})
