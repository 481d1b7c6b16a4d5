import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { largeText, makeScriptedAdapter, parseScript, type TurnSink } from "../../src/index.js"

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

  it.effect("write: never follows a symlink out of the workdir", () =>
    Effect.gen(function* () {
      const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-scripted-"))
      const workdir = path.join(base, "wd")
      const outside = path.join(base, "outside")
      fs.mkdirSync(workdir)
      fs.mkdirSync(outside)
      fs.symlinkSync(outside, path.join(workdir, "link"))
      fs.symlinkSync(path.join(outside, "target.txt"), path.join(workdir, "file-link"))
      const adapter = yield* makeScriptedAdapter()
      for (const prompt of [
        "write:link/x.txt=escaped",
        "write:file-link=escaped",
        "write:../x.txt=escaped"
      ]) {
        const failed = yield* Effect.flip(adapter.run(turn(workdir, prompt), sink([])))
        expect(failed._tag).toBe("AGENT_PROVIDER_ERROR")
      }
      expect(fs.readdirSync(outside)).toEqual([])
      const ok = yield* adapter.run(turn(workdir, "write:inside.txt=hello\ncomplete:ok"), sink([]))
      expect(ok.finalText).toBe("ok")
      expect(fs.readFileSync(path.join(workdir, "inside.txt"), "utf8")).toBe("hello")
      fs.rmSync(base, { recursive: true, force: true })
    })
  )
})
