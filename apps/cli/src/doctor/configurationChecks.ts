import * as fs from "node:fs"
import { type ConfigurationReport, slotId } from "@serverfs/policy"
import { type CheckResult, fail, pass, warn } from "./Check.js"

/**
 * The configuration as `serverfs config check` sees it (without its "running as root" warning:
 * an operator may well run doctor with sudo), then each workdir as the user running doctor: the
 * servers open it with this user's rights, so `access(2)` as this user is the honest test.
 */
export const configurationCheck = (report: ConfigurationReport): CheckResult => {
  const name = "configuration"
  const first = report.errors[0]
  if (first !== undefined) {
    const more = report.errors.length > 1 ? ` (and ${report.errors.length - 1} more)` : ""
    return fail(name, `${first.message}${more}`, "run `serverfs config check` for every error and fix them")
  }
  const warning = report.warnings[0]
  if (warning !== undefined) {
    const what = warning.variable === null ? warning.message : `${warning.variable}: ${warning.message}`
    const more = report.warnings.length > 1 ? ` (and ${report.warnings.length - 1} more)` : ""
    return warn(name, `${what}${more}`, "run `serverfs config check` for every warning")
  }
  const { workdirs } = report.configuration
  return pass(
    name,
    `valid: ${workdirs.length} workdir(s), ${workdirs.filter((w) => !w.readOnly).length} read-write`
  )
}

export const workdirChecks = (report: ConfigurationReport): ReadonlyArray<CheckResult> =>
  report.configuration.workdirs.map((w) => {
    const name = `workdir ${w.alias}`
    const variable = `WORKDIR_${slotId(w.slot)}_PATH`
    const need = w.readOnly ? "read" : "read and write"
    const mode = fs.constants.R_OK | fs.constants.X_OK | (w.readOnly ? 0 : fs.constants.W_OK)
    try {
      fs.accessSync(w.hostPath, mode)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === "ENOENT" || code === "ENOTDIR")
        return fail(name, `${variable} no longer exists`, `recreate it or correct ${variable}`)
      if (code === "EROFS")
        return fail(
          name,
          `${variable} is on a read-only filesystem but the workdir is read-write`,
          `remount it read-write or set WORKDIR_${slotId(w.slot)}_READ_ONLY=true`
        )
      return fail(
        name,
        `this user cannot ${need} ${variable}`,
        `grant the user that runs serverfs-mcp ${need} access (and search on every parent), or run doctor as that user`
      )
    }
    return pass(name, `reachable, ${need} (${w.readOnly ? "read-only" : "read-write"})`)
  })
