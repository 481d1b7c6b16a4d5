import * as os from "node:os"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  largeText,
  makeScriptedAdapter,
  parseScript,
  TurnFileRefused,
  type TurnFiles,
  type TurnSink
} from "../../src/index.js"

/** The scripted runtime: its prompt language and its confinement of `write:`. */
const sink = (events: Array<[string, Record<string, unknown>]>): TurnSink => ({
  event: (type, payload) => Effect.sync(() => void events.push([type, payload])),
  nativeIds: () => Effect.void,
  requestApproval: () => Effect.succeed({ decision: "approve_once", granted_permission_ids: [] }),
  requestQuestion: () => Effect.succeed({ answers: [{ question_id: "q1", selected_option_ids: ["a"] }] })
})

const turn = (cwd: string, prompt: string) => ({
  taskId: "agt_000000000000000000000001",
  cwd,
  workdirRoot: cwd,
  prompt,
  profile: "workspace-write" as const,
  model: null,
  resume: null
})

describe("scripted runtime", () => {
  it("parses one command per line; plain text is not a script", () => {
    expect(parseScript("say:hi\ncomplete:done")).toEqual([
      { _tag: "say", text: "hi" },
      { _tag: "complete", text: "done" }
    ])
    expect(parseScript("please fix the build")).toBeUndefined()
  })

  it("largeText has exactly the requested UTF-8 size", () => {
    for (const n of [0, 1, 5, 6, 7, 300_001]) expect(Buffer.byteLength(largeText(n), "utf8")).toBe(n)
  })

  it.effect("runs a script: events, an approval and the last result", () =>
    Effect.gen(function* () {
      const adapter = yield* makeScriptedAdapter()
      const events: Array<[string, Record<string, unknown>]> = []
      const outcome = yield* adapter.run(turn(os.tmpdir(), "say:one\napproval:make"), sink(events))
      expect(outcome.finalText).toBe("approval=approve_once")
      expect(events.map(([t]) => t)).toEqual(["turn.started", "agent.message"])
    })
  )

  it.effect("write: goes only through the bridge's TurnFiles, with a path below the turn's directory", () =>
    Effect.gen(function* () {
      const adapter = yield* makeScriptedAdapter()
      const writes: Array<[string, string]> = []
      const files: TurnFiles = {
        writeText: (p, content) =>
          p === "denied.pem"
            ? Effect.fail(new TurnFileRefused({ message: "DENIED_PATH: w:denied.pem — access denied" }))
            : Effect.sync(() => void writes.push([p, content]))
      }
      for (const prompt of [
        "write:../x.txt=escaped",
        "write:/etc/x=escaped",
        "write:a//b=x",
        "write:./a=x",
        "write:=x"
      ]) {
        const failed = yield* Effect.flip(adapter.run({ ...turn(os.tmpdir(), prompt), files }, sink([])))
        expect(failed._tag, prompt).toBe("AGENT_PROVIDER_ERROR")
      }
      expect(writes).toEqual([])
      const refused = yield* Effect.flip(
        adapter.run({ ...turn(os.tmpdir(), "write:denied.pem=x"), files }, sink([]))
      )
      expect(refused.message).toBe("scripted write refused: DENIED_PATH: w:denied.pem — access denied")
      // Without TurnFiles (no bridge, or a caller that grants none) nothing is written.
      const none = yield* Effect.flip(adapter.run(turn(os.tmpdir(), "write:inside.txt=hello"), sink([])))
      expect(none.message).toBe("scripted write refused: no file access")
      const events: Array<[string, Record<string, unknown>]> = []
      const ok = yield* adapter.run(
        { ...turn(os.tmpdir(), "write:sub/inside.txt=hello\ncomplete:ok"), files },
        sink(events)
      )
      expect(ok.finalText).toBe("ok")
      expect(writes).toEqual([["sub/inside.txt", "hello"]])
      expect(events).toContainEqual(["file_change.started", { path: "sub/inside.txt" }])
    })
  )
})
