import type { LeaseListResult, LeaseRecoverResult } from "@serverfs/domain"
import { slotId } from "@serverfs/policy"
import type { StyleService } from "../output/Style.js"
import { renderTable } from "../output/Table.js"

/** Human renderings of `serverfs leases` and `serverfs recover`. */
export const renderLeases = (style: StyleService, result: LeaseListResult): string => {
  if (result.workdirs.length === 0) return "no read-write workdirs"
  const table = renderTable(result.workdirs, [
    { header: "SLOT", cell: (w) => slotId(w.slot) },
    { header: "WORKDIR", cell: (w) => w.workdir_alias },
    { header: "LEASE", cell: (w) => w.lease },
    { header: "HELD BY", cell: (w) => w.task_id ?? (w.lease === "held_elsewhere" ? "another process" : "-") },
    { header: "GUARD", cell: (w) => w.guard },
    {
      header: "GUARD TASK",
      cell: (w) =>
        w.guard_task_id === null ? "-" : `${w.guard_task_id} (${w.guard_task_status ?? "unknown"})`
    }
  ])
  // A live task's own guard is the normal state; a guard without its writer is what blocks.
  const hint = result.workdirs.some((w) => w.guard !== "none" && w.lease !== "held")
    ? `\n${style.warn("a guard without its writer blocks writes to its workdir: see `serverfs recover SLOT`")}`
    : ""
  return table + hint
}

export const renderRecover = (style: StyleService, result: LeaseRecoverResult): string => {
  const where = `slot ${slotId(result.slot)} (${result.workdir_alias})`
  if (result.outcome === "no_guard") return `${where}: no recovery guard; nothing to do`
  const how =
    result.proof === "reconciled"
      ? "its runtime proved the run stopped"
      : "forced: the operator vouched that the run stopped"
  const task =
    result.task_id === null ? "" : `; task ${result.task_id} is ${result.task_status ?? "not in the store"}`
  return `${where}: ${style.ok("guard cleared")} (${how})${task}`
}
