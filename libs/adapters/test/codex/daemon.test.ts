/**
 * The Codex adapter against the real pinned `codex` through the official managed app-server
 * daemon: WebSocket over `$CODEX_HOME/app-server-control/app-server-control.sock`, offline
 * against a loopback fake Responses API. One daemon serves the whole file (its install copies
 * the CLI into the CODEX_HOME); it is started by the adapter's autostart in the first test, and
 * killed with its updater loop and sockets at the end.
 *
 * Recovery, as advertised (`in_flight_recovery: "native"` on the daemon; the bridge restart
 * itself is proven end to end in apps/mcp/test/codex/restart.test.ts):
 * - the bridge's connection drops while the daemon lives → the adapter reconnects, resumes the
 *   thread and the daemon replays the pending approval, which stays the SAME ServerFS request;
 * - the daemon is killed and restarted mid-approval → Codex itself reports the turn interrupted
 *   after the restart (nothing is replayed), so the turn fails with AGENT_PROVIDER_DISCONNECTED,
 *   the ServerFS request is left for the bridge to settle (the task is interrupted), and the
 *   thread can be continued by a new task.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import {
  cleanupCodexDaemon,
  controlSocket,
  environmentsWith,
  type FakeResponsesServer,
  killCodexDaemon,
  serverFsNames,
  startCodexDaemon,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { Effect, Fiber, Queue } from "effect"
import { openDaemonConnection } from "../../src/codex/CodexTransport.js"
import { CODEX_PROTOCOL_VERSION, makeCodexAdapter } from "../../src/index.js"
import { expectNoProcessesFor, type Fixture, makeFixture, makeTestSink, startTurn } from "./support.js"

let server: FakeResponsesServer
let fx: Fixture
let counter = 0

beforeAll(async () => {
  server = await startFakeResponsesServer()
  fx = makeFixture(server, "daemon")
})
afterAll(async () => {
  if (fx !== undefined) {
    await cleanupCodexDaemon(fx.home.path)
    await expectNoProcessesFor(fx.home.path)
    fx.remove()
  }
  await server?.close()
})
beforeEach(() => {
  server.reset()
})

/** A fresh workdir for one test (the daemon and its CODEX_HOME are shared). */
const workdir = (): string => {
  const dir = path.join(fx.base, `wd-${++counter}`)
  fs.mkdirSync(dir)
  return dir
}

const request = (taskId: string, prompt: string, cwd: string) =>
  fx.request(taskId, prompt, { cwd, workdirRoot: cwd })

describe("Codex over the managed daemon", () => {
  it.scopedLive("probe starts nothing; autostart runs `daemon start` only when a task needs it", () =>
    Effect.gen(function* () {
      const plain = yield* makeCodexAdapter(fx.options())
      expect(yield* plain.probe()).toMatchObject({
        name: "codex",
        available: false,
        detail: "the Codex app-server daemon is not running"
      })
      // The bridge's environment holds ServerFS's own variables; the daemon must not inherit them.
      const auto = yield* makeCodexAdapter(
        fx.options({
          autostart: true,
          env: {
            ...process.env,
            SERVERFS_BRIDGE_SOCKET: path.join(fx.base, "bridge.sock"),
            WORKDIR_01_PATH: fx.workdir,
            OPERATOR_KEEPS_THIS: "1"
          }
        })
      )
      expect(yield* auto.probe()).toMatchObject({ available: true, version: CODEX_PROTOCOL_VERSION })
      expect(fs.existsSync(controlSocket(fx.home.path))).toBe(false)
      // Without autostart a task finds no daemon: AGENT_RUNTIME_NOT_READY, and nothing to reconcile.
      const test0 = yield* makeTestSink
      const refused = yield* Effect.flip(plain.run(request("d-none", "x", workdir()), test0.sink))
      expect(refused._tag).toBe("AGENT_RUNTIME_NOT_READY")
      expect(yield* plain.reconcile({ taskId: "d-none", sessionId: null, turnId: null })).toMatchObject({
        status: "NOT_RECOVERABLE",
        providerActive: false
      })

      server.script({ type: "message", text: "started on demand" })
      const test = yield* makeTestSink
      const outcome = yield* Effect.flatMap(
        startTurn(auto, request("d-auto", "hello", workdir()), test.sink),
        (t) => t.outcome
      )
      expect(outcome.finalText).toBe("started on demand")
      expect(fs.existsSync(controlSocket(fx.home.path))).toBe(true)
      // Every process of the autostarted daemon (app-server, updater loop) has the operator's
      // environment without SERVERFS_* / WORKDIR_* (read from /proc while it runs).
      // Each environment is read once: a short-lived child (a shell snapshot) may be gone by a
      // second read, and such children may run with an environment of Codex's making.
      const daemon = environmentsWith("CODEX_HOME", fx.home.path)
      expect(daemon.length).toBeGreaterThan(0)
      for (const env of daemon) expect(serverFsNames(env)).toEqual([])
      expect(daemon.some((env) => env.get("OPERATOR_KEEPS_THIS") === "1")).toBe(true)
      // Now the version comes from the running server.
      expect(yield* plain.probe()).toEqual({
        name: "codex",
        available: true,
        version: CODEX_PROTOCOL_VERSION,
        persistent_session: true,
        live_steer: true,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "native",
        model_override: true,
        model_discovery: "runtime_catalog"
      })
    })
  )

  it.scopedLive("command approval over the daemon socket: approve_once runs the command", () =>
    Effect.gen(function* () {
      const cwd = workdir()
      server.script(
        { type: "shell", command: "touch via-daemon.txt", escalate: "marker" },
        { type: "message", text: "done" }
      )
      const adapter = yield* makeCodexAdapter(fx.options())
      const test = yield* makeTestSink
      const turn = yield* startTurn(adapter, request("d-approve", "go", cwd), test.sink)
      const approval = yield* test.nextApproval
      expect(approval.payload.command_display).toBe("/bin/bash -lc 'touch via-daemon.txt'")
      yield* approval.answer({ decision: "approve_once", granted_permission_ids: [] })
      expect((yield* turn.outcome).finalText).toBe("done")
      expect(fs.existsSync(path.join(cwd, "via-daemon.txt"))).toBe(true)
    })
  )

  it.scopedLive(
    "serverRequest/resolved before the human answered: the ServerFS request is withdrawn (stale)",
    () =>
      Effect.gen(function* () {
        const cwd = workdir()
        server.script(
          { type: "shell", command: "touch elsewhere.txt", escalate: "x" },
          { type: "message", text: "ok" }
        )
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, request("d-stale", "go", cwd), test.sink)
        const approval = yield* test.nextApproval
        // Another client of the same daemon (the user's own Codex UI) answers first.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const other = yield* openDaemonConnection({
              socketPath: controlSocket(fx.home.path),
              requestTimeoutSeconds: 30,
              client: { name: "other-client", title: "other", version: "1" }
            })
            yield* other.request("thread/resume", { threadId: test.ids.sessionId ?? "", excludeTurns: true })
            for (;;) {
              const incoming = yield* Queue.take(other.incoming)
              if (
                incoming._tag === "ServerRequest" &&
                incoming.message.method === "item/commandExecution/requestApproval"
              ) {
                yield* other.respond(incoming.message.id, { decision: "accept" })
                break
              }
            }
            yield* Effect.promise(() => server.waitFor((r) => r.toolOutputs.length > 0, "the command output"))
          })
        )
        expect((yield* turn.outcome).finalText).toBe("ok")
        expect(approval.state()).toBe("withdrawn")
        expect(fs.existsSync(path.join(cwd, "elsewhere.txt"))).toBe(true)
      })
  )

  it.scopedLive(
    "connection lost mid-approval: reconnect, thread/resume, the replayed request stays the same ServerFS request",
    () =>
      Effect.gen(function* () {
        const cwd = workdir()
        const sockets: Array<net.Socket> = []
        server.script(
          { type: "shell", command: "touch reattached.txt", escalate: "x" },
          { type: "message", text: "after reconnect" }
        )
        const adapter = yield* makeCodexAdapter(
          fx.options({
            connectSocket: (p) => {
              const socket = net.connect(p)
              sockets.push(socket)
              return socket
            }
          })
        )
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, request("d-drop", "go", cwd), test.sink)
        const approval = yield* test.nextApproval
        expect(sockets).toHaveLength(1)
        sockets[0]?.destroy()
        yield* test.waitForEvent("provider.reattached")
        expect(sockets.length).toBeGreaterThanOrEqual(2)
        expect(test.approvalCount()).toBe(1)
        expect(approval.state()).toBe("pending")
        yield* approval.answer({ decision: "approve_once", granted_permission_ids: [] })
        expect((yield* turn.outcome).finalText).toBe("after reconnect")
        expect(fs.existsSync(path.join(cwd, "reattached.txt"))).toBe(true)
        expect(test.eventTypes()).toContain("provider.disconnected")
      })
  )

  it.scopedLive(
    "steer and a bridge-side stop over the daemon: the turn is interrupted in the daemon, not orphaned",
    () =>
      Effect.gen(function* () {
        const cwd = workdir()
        server.script({ type: "slow", text: "x", ticks: 400, intervalMs: 50 }, (r) => ({
          type: "slow",
          text: `never: ${r.userTexts.at(-1) ?? ""}`,
          ticks: 400,
          intervalMs: 50
        }))
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, request("d-steer", "long", cwd), test.sink)
        yield* Effect.promise(() => server.waitFor((r) => r.index === 0, "the first stream"))
        yield* adapter.steer("d-steer", "change of plan")
        const resampled = yield* Effect.promise(() =>
          server.waitFor((r) => r.index === 1, "the steered stream")
        )
        expect(resampled.userTexts.at(-1)).toBe("change of plan")
        // The bridge interrupts the run (deadline, shutdown): the adapter stops the daemon's turn.
        yield* Fiber.interrupt(turn.fiber)
        expect(
          yield* adapter.reconcile({ taskId: "d-steer", sessionId: test.ids.sessionId ?? null, turnId: null })
        ).toMatchObject({ status: "SESSION_RESUMABLE", providerActive: false })
        yield* Effect.promise(() =>
          server.waitFor((r) => r.index === 1 && r.aborted, "the steered stream closed")
        )
      })
  )

  it.scopedLive(
    "daemon killed and restarted mid-approval: the turn fails as advertised, the request is left to the bridge, the thread continues",
    () =>
      Effect.gen(function* () {
        const cwd = workdir()
        server.script({ type: "shell", command: "touch lost.txt", escalate: "x" })
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, request("d-kill", "go", cwd), test.sink)
        const approval = yield* test.nextApproval
        yield* Effect.promise(() => killCodexDaemon(fx.home.path))
        yield* Effect.promise(() => startCodexDaemon(fx.home.path))
        const error = yield* turn.failure
        expect(error._tag).toBe("AGENT_PROVIDER_DISCONNECTED")
        expect(error.message).toContain("interrupted")
        // Not withdrawn by the adapter: the bridge interrupts the waiting task and stales it.
        expect(approval.state()).toBe("pending")
        yield* approval.end("stale")
        expect(fs.existsSync(path.join(cwd, "lost.txt"))).toBe(false)
        const sessionId = test.ids.sessionId ?? null
        expect(yield* adapter.reconcile({ taskId: "d-kill", sessionId, turnId: null })).toMatchObject({
          status: "SESSION_RESUMABLE",
          providerActive: false
        })
        // session-resume: a new task continues the thread on the restarted daemon.
        server.script({ type: "message", text: "continued after the restart" })
        const next = yield* makeTestSink
        const outcome = yield* Effect.flatMap(
          startTurn(
            adapter,
            fx.request("d-kill-2", "again", {
              cwd,
              workdirRoot: cwd,
              resume: { sessionId: sessionId ?? "" }
            }),
            next.sink
          ),
          (t) => t.outcome
        )
        expect(outcome.finalText).toBe("continued after the restart")
        expect(next.ids.sessionId).toBe(sessionId)
      })
  )
})
