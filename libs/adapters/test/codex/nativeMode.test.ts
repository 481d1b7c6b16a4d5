/**
 * Codex native mode sends no sandbox, approval-policy or config override (spec v0.3 §32 release
 * gate; CodexAdapter.ts): Codex runs with the administrator's own configuration. Checked on the
 * wire: the real pinned `codex app-server` (stdio) runs behind a small recorder that appends every
 * byte the adapter writes to the child's stdin to a file, then the recorded JSON-RPC is read back
 * — a new thread, a turn, and a continued thread with a turn. Offline: the model is the loopback
 * fake of the Responses API.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { codexBin, type FakeResponsesServer, startFakeResponsesServer } from "@serverfs/testkit"
import { Effect } from "effect"
import { makeCodexAdapter } from "../../src/index.js"
import { expectNoProcessesFor, type Fixture, makeFixture, makeTestSink, startTurn } from "./support.js"

const haveCodex = fs.existsSync(codexBin)

let server: FakeResponsesServer
let fx: Fixture
let recording = ""
let recorder = ""

/**
 * An executable standing in for `codex`: it runs the real binary with the same arguments and
 * copies its own stdin both to the child and to `recording`. Signals are passed on, and it exits
 * with the child, so the adapter's stop sequence reaches the real app-server unchanged.
 */
const writeRecorder = (file: string, record: string) => {
  const script = `#!${process.execPath}
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const child = spawn(${JSON.stringify(codexBin)}, process.argv.slice(2), { stdio: ["pipe", "inherit", "inherit"] })
child.stdin.on("error", () => {})
process.stdin.on("data", (chunk) => {
  fs.appendFileSync(${JSON.stringify(record)}, chunk)
  child.stdin.write(chunk)
})
process.stdin.on("end", () => child.stdin.end())
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)))
`
  fs.writeFileSync(file, script, { mode: 0o755 })
}

/** The JSON-RPC messages the adapter sent, in order. */
const sent = (): ReadonlyArray<{ readonly method?: string; readonly params?: Record<string, unknown> }> =>
  fs
    .readFileSync(recording, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> })

/** Every object key anywhere in a value, lower-cased. */
const keysIn = (value: unknown, into: Set<string> = new Set()): Set<string> => {
  if (Array.isArray(value)) for (const v of value) keysIn(v, into)
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      into.add(k.toLowerCase())
      keysIn(v, into)
    }
  }
  return into
}

const OVERRIDES = ["sandbox", "sandboxpolicy", "sandbox_mode", "approvalpolicy", "approval_policy", "config"]

beforeAll(async () => {
  if (haveCodex) server = await startFakeResponsesServer()
})
afterAll(async () => {
  await server?.close()
})
beforeEach(() => {
  if (!haveCodex) return
  server.reset()
  fx = makeFixture(server, "stdio")
  recording = path.join(fx.base, "rpc-recording.jsonl")
  recorder = path.join(fx.base, "codex-recorder")
  writeRecorder(recorder, recording)
})
afterEach(async () => {
  if (!haveCodex) return
  await expectNoProcessesFor(fx.home.path)
  fx.remove()
})

// Needs the pinned codex binary (node_modules/.bin/codex, installed by npm ci): skipped without it.
describe.skipIf(!haveCodex)("Codex native mode on the wire", () => {
  it.scopedLive(
    "thread/start, thread/resume and turn/start carry no sandbox, approval-policy or config override",
    () =>
      Effect.gen(function* () {
        server.script({ type: "message", text: "first answer" }, { type: "message", text: "second answer" })
        const adapter = yield* makeCodexAdapter(fx.options({ bin: recorder }))
        const first = yield* makeTestSink
        const one = yield* Effect.flatMap(
          startTurn(adapter, fx.request("t-one", "hello"), first.sink),
          (t) => t.outcome
        )
        expect(one.finalText).toBe("first answer")
        const sessionId = first.ids.sessionId ?? "missing"
        const second = yield* makeTestSink
        const two = yield* Effect.flatMap(
          startTurn(adapter, fx.request("t-two", "again", { resume: { sessionId } }), second.sink),
          (t) => t.outcome
        )
        expect(two.finalText).toBe("second answer")

        const messages = sent()
        const byMethod = (method: string) => messages.filter((m) => m.method === method)
        // The exact parameters: nothing but what native mode needs.
        const [threadStart] = byMethod("thread/start")
        expect(byMethod("thread/start")).toHaveLength(1)
        expect(Object.keys(threadStart?.params ?? {}).sort()).toEqual(["cwd", "serviceName"])
        expect(threadStart?.params?.cwd).toBe(fx.workdir)
        const [threadResume] = byMethod("thread/resume")
        expect(byMethod("thread/resume")).toHaveLength(1)
        expect(Object.keys(threadResume?.params ?? {}).sort()).toEqual(["excludeTurns", "threadId"])
        const turns = byMethod("turn/start")
        expect(turns).toHaveLength(2)
        for (const turn of turns) {
          expect(Object.keys(turn.params ?? {}).sort()).toEqual(["cwd", "input", "threadId"])
        }
        // And no override under any name, anywhere in anything the adapter sent.
        const keys = keysIn(messages)
        for (const name of OVERRIDES) expect(keys.has(name), name).toBe(false)
        expect([...keys].filter((k) => k.includes("sandbox") || k.includes("approvalpolicy"))).toEqual([])
      })
  )
})
