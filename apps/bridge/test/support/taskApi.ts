/**
 * The task API suites' shared daemon (tasks*.test.ts): one sandbox and one real bridge per test
 * file, the RPC helpers they use, and the closing check of the daemon's output.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { BridgeClientService } from "@serverfs/rpc"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  assertBuilt,
  type Bridge,
  call,
  callCode,
  callError,
  killAll,
  makeSandbox,
  type Sandbox,
  type SubmitInput,
  startBridge,
  stderrRecords,
  submitParams,
  waitForEvent,
  waitForStatus
} from "./daemon.js"

export const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")
export const bytes = (text: string) => Buffer.byteLength(text, "utf8")

/** Canonical JSON written independently of the bridge: sorted keys, compact, recursively. */
export const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`)
      .join(",")}}`
  }
  return JSON.stringify(value)
}

/** Register the file's daemon (beforeAll/afterAll) and return its helpers. */
export const useTaskBridge = () => {
  const state: { sandbox?: Sandbox; bridge?: Bridge } = {}
  const sandbox = (): Sandbox => {
    if (state.sandbox === undefined) throw new Error("the sandbox is not set up yet")
    return state.sandbox
  }
  const bridge = (): Bridge => {
    if (state.bridge === undefined) throw new Error("the bridge is not started yet")
    return state.bridge
  }
  const c = (): BridgeClientService => bridge().client

  beforeAll(async () => {
    assertBuilt()
    const box = makeSandbox([
      {
        slot: 1,
        alias: "w1",
        mode: "workspace-write",
        runtimes: "fake",
        extra: { EXTRA_DENY_GLOBS: "private" }
      },
      { slot: 2, alias: "w2", mode: "workspace-write", runtimes: "codex" },
      // Read-only without delegation: the only kind of workdir another may be nested in (overlap rule).
      { slot: 3, alias: "w3", readOnly: true },
      { slot: 4, alias: "w4", mode: "review", runtimes: "fake" },
      { slot: 5, alias: "nested", dir: "w3/sub/inner", readOnly: true }
    ])
    state.sandbox = box
    const w1 = box.workdir("w1")
    fs.mkdirSync(path.join(w1, ".hidden"))
    fs.mkdirSync(path.join(w1, "private"))
    fs.mkdirSync(path.join(w1, "docs"))
    fs.mkdirSync(path.join(w1, "sub", "inner"), { recursive: true })
    fs.writeFileSync(path.join(w1, "file.txt"), "x")
    fs.symlinkSync(path.join(w1, "docs"), path.join(w1, "link"))
    state.bridge = await startBridge(box.env({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "50" }))
  }, 60_000)

  afterAll(async () => {
    await killAll()
    state.sandbox?.remove()
  })

  const submit = (input: SubmitInput) => call(c(), "task.submit", submitParams(input, "w1"))
  const submitError = (input: SubmitInput) => callError(c(), "task.submit", submitParams(input, "w1"))
  const cancel = (taskId: string) => call(c(), "task.cancel", { task_id: taskId })

  /** Submit and wait until the task asks something; returns its id and the pending request. */
  const untilPending = async (
    input: SubmitInput,
    status: "waiting_for_approval" | "waiting_for_question"
  ) => {
    const { task_id } = await submit(input)
    const view = await waitForStatus(c(), task_id, status)
    // The request is visible from its commit; its `*.requested` event follows.
    await waitForEvent(
      c(),
      task_id,
      status === "waiting_for_approval" ? "approval.requested" : "question.requested"
    )
    const pending = view.pending_request
    if (pending === undefined) throw new Error("no pending request")
    return { taskId: task_id, pending, view }
  }

  const respond = (taskId: string, requestId: string, decision: string, granted?: ReadonlyArray<string>) =>
    call(c(), "task.approval.respond", {
      task_id: taskId,
      request_id: requestId,
      decision,
      ...(granted === undefined ? {} : { granted_permission_ids: granted })
    })

  const answer = (taskId: string, requestId: string, answers: ReadonlyArray<Record<string, unknown>>) =>
    call(c(), "task.question.answer", {
      task_id: taskId,
      request_id: requestId,
      answers: answers as never
    })

  const answerCode = (taskId: string, requestId: string, answers: ReadonlyArray<Record<string, unknown>>) =>
    callCode(c(), "task.question.answer", {
      task_id: taskId,
      request_id: requestId,
      answers: answers as never
    })

  /** The closing check of a suite: the daemon's output after everything the file did. */
  const checkDaemonOutput = () =>
    describe("the daemon's output", () => {
      it("after all of the above, stdout is empty and stderr is JSON lines without host paths, prompts, messages or results", () => {
        expect(bridge().stdout()).toBe("")
        const records = stderrRecords(bridge().stderr())
        expect(records.length).toBeGreaterThan(0)
        for (const record of records) expect(typeof record.event).toBe("string")
        const stderr = bridge().stderr()
        for (const secret of [
          sandbox().base,
          "make build",
          "rm -rf",
          "focus on the API layer",
          "my own words",
          "answer-1",
          "approval=approve_once",
          "steered=",
          "hello world",
          "wrote <workdir>"
        ]) {
          expect(stderr, secret).not.toContain(secret)
        }
      })
    })

  return {
    sandbox,
    c,
    submit,
    submitError,
    cancel,
    untilPending,
    respond,
    answer,
    answerCode,
    checkDaemonOutput
  }
}
