import { describe, expect, it } from "@effect/vitest"
import {
  AGENT_ERROR_CODES,
  AgentTaskNotFound,
  errorFromWire,
  errorSet,
  errorToWire,
  FilesystemErrorCode,
  FROZEN_ERROR_CODES,
  FROZEN_ERRORS,
  isFrozenError,
  LineTooLarge,
  NoErrors,
  PathOutsideWorkdir,
  ReadLimitExceeded,
  TaskIdParams,
  WorkdirBusy,
  WorkdirNotFound,
  WorkdirRecoveryRequired
} from "@serverfs/domain"
import { Schema } from "effect"

describe("the frozen-error registry", () => {
  it("is both planes' codes, disjoint, each with the class of its own tag", () => {
    const planes = [...FilesystemErrorCode.literals, ...AGENT_ERROR_CODES]
    expect(new Set(planes).size).toBe(planes.length)
    expect([...FROZEN_ERROR_CODES]).toEqual(planes)
    for (const code of FROZEN_ERROR_CODES) expect(FROZEN_ERRORS[code]._tag).toBe(code)
  })

  it("recognizes instances, not look-alikes", () => {
    expect(isFrozenError(new AgentTaskNotFound({ message: "no such task" }))).toBe(true)
    expect(isFrozenError({ _tag: "AGENT_TASK_NOT_FOUND", message: "no such task" })).toBe(false)
  })

  it("each class carries its code as tag and name, and its fields by kind", () => {
    const error = new LineTooLarge({ workdir: "w", path: "a", line: 3, maxBytes: 9 })
    expect(error).toMatchObject({ _tag: "LINE_TOO_LARGE", name: "LINE_TOO_LARGE", line: 3, maxBytes: 9 })
    expect(error).toBeInstanceOf(Error)
    expect(LineTooLarge.fields).toEqual({
      workdir: "string",
      path: "string",
      line: "number",
      maxBytes: "number"
    })
    expect(ReadLimitExceeded.fields.limit).toEqual({ oneOf: ["scan_bytes", "deadline"] })
  })
})

describe("a method's error set", () => {
  const set = errorSet(AgentTaskNotFound, WorkdirBusy)

  it("has instances of its classes, not of others, not look-alikes", () => {
    expect(set.has(new AgentTaskNotFound({ message: "gone" }))).toBe(true)
    expect(set.has(new WorkdirBusy({ workdir: "w" }))).toBe(true)
    expect(set.has(new WorkdirNotFound({ workdir: "w" }))).toBe(false)
    expect(set.has({ _tag: "AGENT_TASK_NOT_FOUND", message: "gone" })).toBe(false)
    expect(set.has(undefined)).toBe(false)
    expect(NoErrors.has(new AgentTaskNotFound({ message: "gone" }))).toBe(false)
  })

  it("lists its classes (what docs:check compares with docs/rpc.md)", () => {
    expect(set.classes.map((c) => c._tag)).toEqual(["AGENT_TASK_NOT_FOUND", "WORKDIR_BUSY"])
  })
})

describe("frozen errors on the wire", () => {
  const roundTrip = (error: Parameters<typeof errorToWire>[0]) => errorFromWire(errorToWire(error))

  it("an agent-plane error comes back as its class with the message verbatim", () => {
    const back = roundTrip(new AgentTaskNotFound({ message: "no such task" }))
    expect(back).toBeInstanceOf(AgentTaskNotFound)
    expect(back?.message).toBe("no such task")
  })

  it("filesystem codes the bridge relays come back as their classes, fields included", () => {
    for (const error of [
      new WorkdirBusy({ workdir: "proj" }),
      new WorkdirRecoveryRequired({ workdir: "my proj" }),
      new WorkdirNotFound({ workdir: "nope" }),
      new PathOutsideWorkdir({ workdir: "w", path: "../x — y" })
    ]) {
      const back = roundTrip(error)
      expect(back).toBeInstanceOf(error.constructor)
      expect(back?.message).toBe(error.message)
      expect(back?._tag).toBe(error._tag)
    }
    expect(roundTrip(new WorkdirBusy({ workdir: "proj" }))).toMatchObject({ workdir: "proj" })
  })

  it("a message that does not invert exactly, or an unknown code, gives no class", () => {
    expect(errorFromWire({ code: "WORKDIR_BUSY", message: "something else" })).toBeUndefined()
    expect(errorFromWire({ code: "NOT_A_CODE", message: "x" })).toBeUndefined()
    // An escaped quote does not read back as the same text.
    expect(roundTrip(new WorkdirNotFound({ workdir: "it's" }))).toBeUndefined()
    // Numeric fields are not recovered from text.
    expect(roundTrip(new LineTooLarge({ workdir: "w", path: "a", line: 1, maxBytes: 2 }))).toBeUndefined()
  })
})

describe("branded ids", () => {
  it("decode from plain strings and keep the plain-string error text", () => {
    const decode = Schema.decodeUnknownEither(TaskIdParams)
    expect(decode({ task_id: "agt_1" })).toMatchObject({ right: { task_id: "agt_1" } })
    const left = decode({ task_id: 5 })
    expect(left._tag).toBe("Left")
    if (left._tag === "Left") expect(left.left.message).toContain("Expected string, actual 5")
  })
})
