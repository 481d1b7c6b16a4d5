import { Command } from "@effect/cli"
import {
  type BridgeSettings,
  ExitWithCode,
  type GlobalSettings,
  inspectConfiguration
} from "@serverfs/policy"
import { Console, Effect } from "effect"
import { bridgeChecks } from "../doctor/bridgeChecks.js"
import { type CheckResult, exitCodeOf, skip } from "../doctor/Check.js"
import { configurationCheck, workdirChecks } from "../doctor/configurationChecks.js"
import {
  diskSpaceCheck,
  lockDirectoryCheck,
  socketPathCheck,
  stateDirectoryCheck
} from "../doctor/directoryChecks.js"
import { json } from "../output/JsonOption.js"
import { Style, type StyleService } from "../output/Style.js"
import { printable } from "../output/Table.js"

/**
 * `serverfs doctor`: the checks an operator would otherwise do by hand, each PASS, WARN, FAIL or
 * SKIP with a one-line fix on WARN and FAIL. Read-only: it creates, changes and removes nothing,
 * and reaches the bridge only through its RPC socket (one `runtime.list`). Exit code by the worst
 * result: 0 all PASS/SKIP, 1 a WARN, 2 a FAIL.
 */
const BRIDGE_CHECKS = [
  "socket path",
  "bridge reachable",
  "runtimes",
  "lock directory",
  "state directory",
  "disk space"
]

const bridgeSide = (
  global: GlobalSettings,
  bridge: BridgeSettings,
  configuration: Parameters<typeof bridgeChecks>[0]
) =>
  Effect.gen(function* () {
    const socket = yield* socketPathCheck(global, bridge.peerGid)
    const reached = yield* bridgeChecks(configuration)
    const lock = lockDirectoryCheck(global, bridge)
    const state = stateDirectoryCheck(bridge)
    const disk =
      state.status === "FAIL"
        ? skip("disk space", "the state directory failed its check")
        : diskSpaceCheck(bridge)
    return [socket, ...reached, lock, state, disk]
  })

export const runDoctor: Effect.Effect<ReadonlyArray<CheckResult>> = Effect.gen(function* () {
  // No uid: the "running as root" warning belongs to config check, not to an operator's sudo.
  const report = yield* Effect.sync(() => inspectConfiguration(process.env, { uid: undefined }))
  const local = [configurationCheck(report), ...workdirChecks(report)]
  const { global } = report.configuration
  if (!global.agentBridgeEnabled || report.bridge === undefined) {
    return [
      ...local,
      ...BRIDGE_CHECKS.map((c) =>
        skip(c, "the Agent Bridge is disabled (SERVERFS_AGENT_BRIDGE_ENABLED is not true)")
      )
    ]
  }
  return [...local, ...(yield* bridgeSide(global, report.bridge, report.configuration))]
})

const paint = (style: StyleService, status: CheckResult["status"], text: string): string =>
  status === "PASS"
    ? style.ok(text)
    : status === "WARN"
      ? style.warn(text)
      : status === "FAIL"
        ? style.fail(text)
        : style.dim(text)

/** Aligned lines; the status column is padded before it is coloured, so colour never shifts it. */
export const renderChecks = (results: ReadonlyArray<CheckResult>, style: StyleService): string => {
  const width = Math.max(...results.map((r) => [...r.check].length))
  const lines: Array<string> = []
  for (const r of results) {
    lines.push(
      `${paint(style, r.status, r.status.padEnd(4))}  ${r.check.padEnd(width)}  ${printable(r.detail)}`
    )
    if (r.fix !== undefined) lines.push(`${" ".repeat(6 + width)}  fix: ${printable(r.fix)}`)
  }
  const code = exitCodeOf(results)
  lines.push(
    code === 0 ? "doctor: all checks passed" : `doctor: ${code === 2 ? "FAIL" : "WARN"} (exit ${code})`
  )
  return lines.join("\n")
}

/** The `--json` document; keys pinned in apps/cli/test/doctor.test.ts. */
export const checksJson = (results: ReadonlyArray<CheckResult>) => ({
  ok: exitCodeOf(results) === 0,
  exitCode: exitCodeOf(results),
  checks: results.map((r) => ({ check: r.check, status: r.status, detail: r.detail, fix: r.fix ?? null }))
})

export const doctorCommand = Command.make("doctor", { json }, ({ json }) =>
  Effect.gen(function* () {
    const results = yield* runDoctor
    const style = yield* Style
    yield* Console.log(json ? JSON.stringify(checksJson(results), null, 2) : renderChecks(results, style))
    const code = exitCodeOf(results)
    if (code !== 0) return yield* new ExitWithCode({ code })
  }).pipe(Effect.provide(Style.fromProcess))
).pipe(
  Command.withDescription(
    "Check the configuration, workdirs, the bridge's socket, lock and state directories, disk space, the bridge and its runtimes. Exit 0 all PASS, 1 a WARN, 2 a FAIL."
  )
)
