/**
 * Claude's ask path relayed as ServerFS approvals, on the real CLI: allow, allow with an edited
 * input, deny, deny + interrupt (cancel_task), approve_session without touching any settings file,
 * and a pending approval withdrawn when the turn is interrupted.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { bashReply, fileBytes, lastToolResults, textReply } from "@serverfs/testkit"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { ClaudeApprovalResolution } from "../../src/index.js"
import {
  type ClaudeFixture,
  decision,
  expectFailure,
  expectSuccess,
  makeRecording,
  runTurn,
  startClaudeFixture,
  waitUntil
} from "./support.js"

let fx: ClaudeFixture

beforeAll(async () => {
  fx = await startClaudeFixture()
})

beforeEach(() => {
  fx.server.clear()
})

afterAll(async () => {
  await fx?.close()
})

const writeCommand = (file: string, content: string) => `python3 -c "open('${file}','w').write('${content}')"`
const inWorkspace = (file: string) => path.join(fx.workspace, file)

/** The model's second request: what the tool call returned to it. */
const toolOutcome = () => {
  const second = fx.server.modelRequests()[1]
  if (second === undefined) throw new Error("the model was not called again")
  return lastToolResults(second)
}

describe("Claude adapter: Bash approvals", () => {
  it("approve_once runs the command and the model sees its result", async () => {
    fx.server.queue([bashReply(writeCommand("allowed.txt", "allowed"), "Write a file"), textReply("written")])
    const rec = makeRecording({ approval: () => Effect.succeed(decision("approve_once")) })
    expect(expectSuccess(await runTurn(fx.adapter, fx.request("write the file"), rec))).toBe("written")
    expect(rec.approvals).toHaveLength(1)
    expect(rec.approvals[0]).toMatchObject({
      category: "command",
      command_display: writeCommand("allowed.txt", "allowed"),
      relative_cwd: "",
      tool: "Bash",
      tool_input: { command: writeCommand("allowed.txt", "allowed"), description: "Write a file" }
    })
    expect(rec.approvals[0]?.available_decisions).toEqual(
      expect.arrayContaining(["approve_once", "deny", "cancel_task"])
    )
    expect(fs.readFileSync(inWorkspace("allowed.txt"), "utf8")).toBe("allowed")
    expect(toolOutcome()).toEqual([expect.objectContaining({ isError: false })])
    expect(rec.events.map((e) => e.type)).toEqual([
      "turn.started",
      "command.started",
      "command.completed",
      "agent.message"
    ])
    expect(rec.events[1]?.payload).toMatchObject({ command: writeCommand("allowed.txt", "allowed") })
  })

  it("an approval answered with an edited input runs the edited command", async () => {
    fx.server.queue([
      bashReply(writeCommand("original.txt", "original"), "Write a file"),
      textReply("written")
    ])
    const edited: ClaudeApprovalResolution = {
      ...decision("approve_once"),
      updated_input: { command: writeCommand("edited.txt", "edited"), description: "Write a file" }
    }
    const rec = makeRecording({ approval: () => Effect.succeed(edited) })
    expectSuccess(await runTurn(fx.adapter, fx.request("write the file"), rec))
    expect(fs.readFileSync(inWorkspace("edited.txt"), "utf8")).toBe("edited")
    expect(fs.existsSync(inWorkspace("original.txt"))).toBe(false)
  })

  it("deny: the command does not run, the model is told, the turn goes on", async () => {
    fx.server.queue([
      bashReply(writeCommand("denied.txt", "denied"), "Write a file"),
      textReply("understood")
    ])
    const rec = makeRecording({ approval: () => Effect.succeed(decision("deny")) })
    expect(expectSuccess(await runTurn(fx.adapter, fx.request("write the file"), rec))).toBe("understood")
    expect(fs.existsSync(inWorkspace("denied.txt"))).toBe(false)
    expect(toolOutcome()).toEqual([
      expect.objectContaining({ isError: true, text: "The user denied this action (ServerFS approval)." })
    ])
  })

  it("cancel_task denies with interrupt: nothing runs, the model is not called again, the turn fails", async () => {
    fx.server.queue([
      bashReply(writeCommand("cancelled.txt", "x"), "Write a file"),
      textReply("should not happen")
    ])
    const rec = makeRecording({ approval: () => Effect.succeed(decision("cancel_task")) })
    const error = expectFailure(await runTurn(fx.adapter, fx.request("write the file"), rec))
    expect(error._tag).toBe("AGENT_PROVIDER_ERROR")
    expect(fs.existsSync(inWorkspace("cancelled.txt"))).toBe(false)
    expect(fx.server.modelRequests()).toHaveLength(1)
  })

  it("approve_session grants the session only: no settings file changes, the identical call is not asked again", async () => {
    // Every settings file Claude reads, present with content, plus the workspace trusted (so the
    // project files are live). Their bytes must not change; no new file may appear.
    const projectDir = path.join(fx.workspace, ".claude")
    fs.mkdirSync(projectDir, { recursive: true })
    const files = [
      fx.sandbox.userSettings,
      path.join(projectDir, "settings.json"),
      path.join(projectDir, "settings.local.json")
    ]
    for (const file of files)
      fs.writeFileSync(file, `${JSON.stringify({ permissions: { allow: [] } }, null, 2)}\n`)
    fx.sandbox.trust(fx.workspace)
    const before = files.map(fileBytes)
    const listing = () => [
      fs.readdirSync(projectDir).sort(),
      fs
        .readdirSync(fx.sandbox.configDir)
        .filter((f) => f.endsWith(".json"))
        .sort()
    ]
    const listedBefore = listing()
    try {
      const command = `python3 -c "print(6*7)"`
      fx.server.queue([
        bashReply(command, "Compute"),
        bashReply(command, "Compute again"),
        textReply("42 twice")
      ])
      const rec = makeRecording({ approval: () => Effect.succeed(decision("approve_session")) })
      expect(expectSuccess(await runTurn(fx.adapter, fx.request("compute twice"), rec))).toBe("42 twice")
      expect(rec.approvals).toHaveLength(1)
      expect(rec.approvals[0]?.available_decisions).toEqual([
        "approve_once",
        "approve_session",
        "deny",
        "cancel_task"
      ])
      const third = fx.server.modelRequests()[2]
      expect(third === undefined ? [] : lastToolResults(third)).toEqual([
        expect.objectContaining({ isError: false, text: "42" })
      ])
      expect(files.map(fileBytes)).toEqual(before)
      expect(listing()).toEqual(listedBefore)
    } finally {
      fs.rmSync(projectDir, { recursive: true, force: true })
      fs.rmSync(fx.sandbox.userSettings, { force: true })
    }
  })

  it("a pending approval is withdrawn (its relay interrupted) when the turn is cancelled", async () => {
    fx.server.queue([
      bashReply(writeCommand("pending.txt", "x"), "Write a file"),
      textReply("should not happen")
    ])
    const rec = makeRecording({ approval: () => Effect.never })
    const request = fx.request("write the file")
    const running = runTurn(fx.adapter, request, rec)
    await waitUntil("the approval", () => (rec.approvals.length > 0 ? true : undefined))
    await Effect.runPromise(fx.adapter.cancel(request.taskId))
    const error = expectFailure(await running)
    expect(error.message).toContain("interrupted at the user's request")
    expect(rec.withdrawn.count).toBe(1)
    expect(fs.existsSync(inWorkspace("pending.txt"))).toBe(false)
    expect(fx.server.modelRequests()).toHaveLength(1)
    // Repeating the cancel after the end has no effect.
    await Effect.runPromise(fx.adapter.cancel(request.taskId))
  })
})
