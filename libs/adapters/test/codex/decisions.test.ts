/**
 * What the real `codex` 0.171 honours beyond the decisions it lists, and the environment its
 * processes get (stdio transport; the autostarted daemon's environment is checked in
 * daemon.test.ts). For an escalated command Codex lists accept, an execpolicy amendment and
 * cancel, yet it accepts `decline` (the command does not run, the model is told) and honours
 * `acceptForSession` — for a command (the identical command is not asked again, stdio.test.ts)
 * and for a file change (a second patch to an approved path is not asked). These proofs are why
 * CodexMapping offers all four decisions for commands and file changes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import {
  codexBin,
  environmentsWith,
  type FakeResponsesServer,
  serverFsNames,
  startFakeResponsesServer
} from "@serverfs/testkit"
import { Effect } from "effect"
import { makeCodexAdapter } from "../../src/index.js"
import { expectNoProcessesFor, type Fixture, makeFixture, makeTestSink, startTurn } from "./support.js"

let server: FakeResponsesServer
let fx: Fixture

beforeAll(async () => {
  server = await startFakeResponsesServer()
})
afterAll(async () => {
  await server?.close()
})
beforeEach(() => {
  server.reset()
  fx = makeFixture(server, "stdio")
})
afterEach(async () => {
  await expectNoProcessesFor(fx.home.path)
  fx.remove()
})

/** The bridge's environment as a real deployment has it: ServerFS's variables beside the operator's. */
const bridgeEnvironment = (): NodeJS.ProcessEnv => ({
  ...process.env,
  SERVERFS_BRIDGE_SOCKET: path.join(fx.base, "bridge.sock"),
  SERVERFS_CODEX_HOME: fx.home.path,
  WORKDIR_01_ALIAS: "main",
  WORKDIR_01_PATH: fx.workdir,
  OPERATOR_KEEPS_THIS: "1"
})

describe("Codex decisions and environment (stdio)", () => {
  it.scopedLive(
    "deny on a command Codex lists without decline: not run, the model told, the turn succeeds",
    () =>
      Effect.gen(function* () {
        const marker = path.join(fx.outside, "denied.txt")
        server.script({ type: "shell", command: `touch ${marker}`, escalate: "outside" }, (request) => ({
          type: "message",
          text: `model saw: ${request.toolOutputs.at(-1)?.output ?? "nothing"}`
        }))
        const adapter = yield* makeCodexAdapter(fx.options())
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-deny", "try"), test.sink)
        const approval = yield* test.nextApproval
        expect(approval.payload.available_decisions).toEqual([
          "approve_once",
          "approve_session",
          "deny",
          "cancel_task"
        ])
        yield* approval.answer({ decision: "deny", granted_permission_ids: [] })
        expect((yield* turn.outcome).finalText).toMatch(/^model saw: .*rejected by user/)
        expect(fs.existsSync(marker)).toBe(false)
        // The model's next request carries the declined call's output.
        expect(server.requests()).toHaveLength(2)
        expect(server.requests()[1]?.toolOutputs.at(-1)?.output).toMatch(/rejected by user/)
        const completed = test.events.find(
          (e) => e.type === "item.completed" && e.payload.type === "commandExecution"
        )
        expect(completed?.payload.status).toBe("declined")
      })
  )

  const twoPatches = (decision: "approve_once" | "approve_session") =>
    Effect.gen(function* () {
      const target = path.join(fx.outside, "session.txt")
      server.script(
        { type: "patch", patch: `*** Begin Patch\n*** Add File: ${target}\n+one\n*** End Patch\n` },
        {
          type: "patch",
          patch: `*** Begin Patch\n*** Update File: ${target}\n@@\n-one\n+two\n*** End Patch\n`
        },
        { type: "message", text: "patched twice" }
      )
      const adapter = yield* makeCodexAdapter(fx.options())
      const test = yield* makeTestSink
      const turn = yield* startTurn(adapter, fx.request("t-fsession", "patch twice"), test.sink)
      const approval = yield* test.nextApproval
      expect(approval.payload.available_decisions).toContain("approve_session")
      yield* approval.answer({ decision, granted_permission_ids: [] })
      if (decision === "approve_once") {
        // The control: without the session grant the second patch is asked for again.
        const second = yield* test.nextApproval
        yield* second.answer({ decision: "approve_once", granted_permission_ids: [] })
      }
      expect((yield* turn.outcome).finalText).toBe("patched twice")
      expect(fs.readFileSync(target, "utf8")).toBe("two\n")
      return test.approvalCount()
    })

  it.scopedLive("approve_session on a file change: a second patch to the same path is not asked again", () =>
    Effect.gen(function* () {
      expect(yield* twoPatches("approve_session")).toBe(1)
    })
  )

  it.scopedLive("approve_once on a file change (the control): the second patch is asked again", () =>
    Effect.gen(function* () {
      expect(yield* twoPatches("approve_once")).toBe(2)
    })
  )

  it.scopedLive(
    "the app-server child, the daemon start and the CLI commands hold no SERVERFS_* or WORKDIR_* variable",
    () =>
      Effect.gen(function* () {
        // A wrapper records the environment of every CLI invocation (`--version`, `app-server`,
        // `app-server daemon start` — which it then fails at once: the daemon would inherit exactly
        // this environment, and the real autostart is slow; daemon.test.ts reads the real daemon's).
        const dumps = path.join(fx.base, "env")
        fs.mkdirSync(dumps)
        const wrapper = path.join(fx.base, "codex-wrapper.sh")
        fs.writeFileSync(
          wrapper,
          `#!/bin/sh\nenv > "${dumps}/$$-$1-$2.txt"\n[ "$2" = daemon ] && exit 1\nexec "${codexBin}" "$@"\n`,
          {
            mode: 0o755
          }
        )
        server.script(
          { type: "shell", command: "touch held.txt", escalate: "hold" },
          { type: "message", text: "ok" }
        )
        const adapter = yield* makeCodexAdapter(fx.options({ bin: wrapper, env: bridgeEnvironment() }))
        expect(yield* adapter.probe()).toMatchObject({ available: true })
        const test = yield* makeTestSink
        const turn = yield* startTurn(adapter, fx.request("t-env", "hold"), test.sink)
        const approval = yield* test.nextApproval
        // While the approval is pending the app-server runs: read its environment from /proc.
        // Each environment is read once (a short-lived child can be gone by a second read); the
        // app-server itself is among them and keeps the operator's own variable.
        const running = environmentsWith("CODEX_HOME", fx.home.path)
        expect(running.length).toBeGreaterThan(0)
        for (const env of running) expect(serverFsNames(env)).toEqual([])
        expect(running.some((env) => env.get("OPERATOR_KEEPS_THIS") === "1")).toBe(true)
        yield* approval.answer({ decision: "deny", granted_permission_ids: [] })
        yield* turn.outcome
        const autostart = yield* makeCodexAdapter(
          fx.options({ bin: wrapper, env: bridgeEnvironment(), transport: "daemon", autostart: true })
        )
        const notStarted = yield* Effect.flip(autostart.run(fx.request("t-env-daemon", "x"), test.sink))
        expect(notStarted._tag).toBe("AGENT_RUNTIME_NOT_READY")
        const recorded = fs.readdirSync(dumps)
        expect(recorded.some((f) => f.endsWith("--version-.txt"))).toBe(true)
        expect(recorded.some((f) => f.endsWith("-app-server-.txt"))).toBe(true)
        expect(recorded.some((f) => f.endsWith("-app-server-daemon.txt"))).toBe(true)
        for (const file of recorded) {
          const names = fs
            .readFileSync(path.join(dumps, file), "utf8")
            .split("\n")
            .map((line) => line.slice(0, line.indexOf("=")))
          expect(names.filter((n) => /^(SERVERFS_|WORKDIR_)/.test(n))).toEqual([])
          expect(names).toContain("OPERATOR_KEEPS_THIS")
          expect(names).toContain("CODEX_HOME")
        }
      })
  )
})
