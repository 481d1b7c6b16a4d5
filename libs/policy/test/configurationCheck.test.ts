import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit } from "effect"
import {
  ConfigurationError,
  ConfigurationErrors,
  checkBridgeSettings,
  checkServerConfiguration,
  EXIT_CONFIGURATION,
  ExitWithCode,
  fellBack,
  type InspectSlotDirectory,
  parseEnvFileAll,
  parseServerConfiguration,
  withExitCode
} from "../src/index.js"
import { decideProgramArguments } from "../src/ProgramArguments.js"

/**
 * One pass collects every configuration problem (`serverfs config check`); the servers keep
 * stopping on the first, which must be exactly the one the pass collected first.
 */
const directory: InspectSlotDirectory = () => ({ _tag: "directory" })
/** A login environment (HOME set): the bridge's paths have their user-scoped defaults. */
const lookupOf = (vars: Record<string, string>) => (name: string) =>
  name === "HOME" ? (vars[name] ?? "/home/t") : vars[name]
const located = () => ({ chain: ["1:1"], isFilesystemRoot: false })
let inode = 0
const distinct = () => ({ chain: [`9:${++inode}`, "9:1"], isFilesystemRoot: false })

describe("collecting every configuration problem", () => {
  it("lists global, slot and cross-check problems in check order; the first is the servers' error", () => {
    const vars = {
      SERVERFS_MAX_READ_BYTES: "-1",
      SERVERFS_MAX_READ_LINES: "lots",
      SERVERFS_AGENT_RUNTIMES: "fake",
      WORKDIR_01_ALIAS: "docs",
      WORKDIR_01_PATH: "/srv/docs",
      WORKDIR_01_READ_ONLY: "nah",
      WORKDIR_02_ALIAS: "1bad",
      WORKDIR_02_PATH: "/srv/other",
      WORKDIR_03_READ_ONLY: "false"
    }
    const { problems } = checkServerConfiguration(lookupOf(vars), directory, distinct)
    expect(problems.map((p) => p.message)).toEqual([
      "SERVERFS_MAX_READ_BYTES: expected a positive integer",
      "SERVERFS_MAX_READ_LINES: expected a positive integer",
      "SERVERFS_AGENT_RUNTIMES: runtimes are set but SERVERFS_AGENT_MODE is disabled",
      "WORKDIR_01_READ_ONLY: expected one of true/false/1/0/yes/no/on/off",
      "WORKDIR_02_ALIAS: must match ^[A-Za-z][A-Za-z0-9_-]{0,31}$",
      "WORKDIR_03_READ_ONLY: a disabled slot cannot be read-write; set WORKDIR_03_ALIAS"
    ])
    const first = parseServerConfiguration(lookupOf(vars), directory, distinct)
    expect(Either.isLeft(first) && first.left.message).toBe(problems[0]?.message)
  })

  it("a rule over a variable that already failed is skipped, not reported as a second problem", () => {
    const { problems } = checkServerConfiguration(
      lookupOf({
        SERVERFS_AGENT_MODE: "sometimes",
        SERVERFS_AGENT_RUNTIMES: "fake",
        WORKDIR_01_ALIAS: "docs",
        WORKDIR_01_PATH: "/srv/docs",
        WORKDIR_01_READ_ONLY: "maybe",
        WORKDIR_01_AGENT_MODE: "workspace-write",
        WORKDIR_01_AGENT_RUNTIMES: "fake"
      }),
      directory,
      located
    )
    expect(problems.map((p) => p.variable)).toEqual(["SERVERFS_AGENT_MODE", "WORKDIR_01_READ_ONLY"])
  })

  it("a valid configuration has no problems and the same value either way", () => {
    const vars = { WORKDIR_01_ALIAS: "docs", WORKDIR_01_PATH: "/srv/docs" }
    const checked = checkServerConfiguration(lookupOf(vars), directory, located)
    expect(checked.problems).toEqual([])
    expect(
      Either.getOrThrow(parseServerConfiguration(lookupOf(vars), directory, located)).workdirs
    ).toHaveLength(1)
  })

  it("bridge settings: every bad variable, and the disk budget only when its inputs parsed", () => {
    const { problems } = checkBridgeSettings(
      lookupOf({
        SERVERFS_AGENT_TASK_TIMEOUT_SECONDS: "0",
        SERVERFS_AGENT_MAX_CONNECTIONS: "100000",
        SERVERFS_AGENT_STATE_MAX_BYTES: "1"
      })
    )
    expect(problems.map((p) => p.variable)).toEqual([
      "SERVERFS_AGENT_TASK_TIMEOUT_SECONDS",
      "SERVERFS_AGENT_MAX_CONNECTIONS",
      "SERVERFS_AGENT_STATE_MAX_BYTES"
    ])
    const skipped = checkBridgeSettings(
      lookupOf({ SERVERFS_AGENT_MAX_ACTIVE_TASKS: "x", SERVERFS_AGENT_STATE_MAX_BYTES: "1" })
    )
    expect(skipped.problems.map((p) => p.variable)).toEqual(["SERVERFS_AGENT_MAX_ACTIVE_TASKS"])
  })

  it("the env file: every bad line, the good lines still count, a repeated name keeps its first value", () => {
    const { entries, problems } = parseEnvFileAll(Buffer.from("A=1\nstray\nB='x\nA=2\nC=3\n"))
    expect([...entries]).toEqual([
      ["A", "1"],
      ["C", "3"]
    ])
    expect(problems).toEqual([
      { line: 2, problem: 'not a NAME=value line (no "=")' },
      { line: 3, problem: "the single-quoted value is not closed on this line (values cannot span lines)" },
      { line: 4, problem: "A is set again (first on line 1)" }
    ])
  })

  it("fellBack: only a set value of a lenient kind that was not understood", () => {
    expect(fellBack("lenient int", "abc")).toBe(true)
    expect(fellBack("lenient int", "-3")).toBe(true)
    expect(fellBack("lenient int", "12")).toBe(false)
    expect(fellBack("lenient float", "0")).toBe(true)
    expect(fellBack("lenient bool", "enabled")).toBe(true)
    expect(fellBack("lenient bool", "off")).toBe(false)
    expect(fellBack("log level", "debug")).toBe(false)
    expect(fellBack("log level", "loud")).toBe(true)
    expect(fellBack("strict int", "abc")).toBe(false)
    expect(fellBack("lenient int", "  ")).toBe(false)
  })
})

describe("exit codes of several errors and of a printed verdict", () => {
  it.effect("ConfigurationErrors exits 2; ExitWithCode exits with its code and prints nothing", () =>
    Effect.gen(function* () {
      const policy = { auditConfigurationErrors: false, exitOnSuccess: false, interruptedExitCode: 1 }
      const errors = [
        new ConfigurationError({ variable: "A", problem: "bad" }),
        new ConfigurationError({ variable: "B", problem: "worse" })
      ]
      expect(yield* withExitCode(new ConfigurationErrors({ errors }), policy)).toBe(EXIT_CONFIGURATION)
      expect(yield* withExitCode(new ExitWithCode({ code: 1 }), policy)).toBe(1)
      const exit = yield* Effect.exit(withExitCode(Effect.interrupt, policy))
      expect(Exit.isInterrupted(exit)).toBe(true)
    })
  )
})

describe("program arguments", () => {
  const program = { name: "serverfs-mcp", version: "1.2.3", description: "test" }
  it("help, version, run, and refusal (control characters shown as ?; long arguments cut)", () => {
    expect(decideProgramArguments([], program)).toEqual({ _tag: "run" })
    expect(decideProgramArguments(["-V"], program)).toMatchObject({ code: 0, stdout: "serverfs-mcp 1.2.3\n" })
    expect(decideProgramArguments(["-h", "--version"], program)).toMatchObject({ code: 0 })
    const refused = decideProgramArguments(["--help", `x\u0007${"y".repeat(100)}`], program)
    expect(refused).toMatchObject({ _tag: "exit", code: 2, stdout: "" })
    if (refused._tag === "exit") {
      expect(refused.stderr).toContain(`unknown argument "x?${"y".repeat(62)}…"`)
      expect(refused.stderr.endsWith("see serverfs-mcp --help\n")).toBe(true)
    }
  })
})
