import * as fs from "node:fs"

/**
 * One line of `serverfs doctor`: what was checked, how it went and, on WARN or FAIL, the one-line
 * fix. SKIP is a check that does not apply (the Agent Bridge disabled) or cannot run because an
 * earlier one failed; it says why. Details name variables, aliases and slots — never a host path
 * or a uid (the report is meant to be pasted into a ticket).
 */
export type CheckStatus = "PASS" | "WARN" | "FAIL" | "SKIP"

export interface CheckResult {
  readonly check: string
  readonly status: CheckStatus
  readonly detail: string
  /** The fix, on WARN and FAIL. */
  readonly fix?: string
}

export const pass = (check: string, detail: string): CheckResult => ({ check, status: "PASS", detail })
export const skip = (check: string, detail: string): CheckResult => ({ check, status: "SKIP", detail })
export const warn = (check: string, detail: string, fix: string): CheckResult => ({
  check,
  status: "WARN",
  detail,
  fix
})
export const fail = (check: string, detail: string, fix: string): CheckResult => ({
  check,
  status: "FAIL",
  detail,
  fix
})

/** Exit code by the worst result: 0 all PASS/SKIP, 1 a WARN, 2 a FAIL. */
export const exitCodeOf = (results: ReadonlyArray<CheckResult>): 0 | 1 | 2 =>
  results.some((r) => r.status === "FAIL") ? 2 : results.some((r) => r.status === "WARN") ? 1 : 0

/** lstat without throwing: the entry, "missing", or the errno code that stopped it. */
export const lstatOf = (target: string): fs.Stats | "missing" | string => {
  try {
    return fs.lstatSync(target)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return code === "ENOENT" || code === "ENOTDIR" ? "missing" : (code ?? "unknown error")
  }
}

/** The uid doctor runs as (owners are compared with it), undefined off POSIX. */
export const ownUid = (): number | undefined => process.geteuid?.()
