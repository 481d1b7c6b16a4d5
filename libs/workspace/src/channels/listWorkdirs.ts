import type { ListWorkdirsOutput } from "@serverfs/domain"
import type { Workdir } from "@serverfs/policy"

/** list_workdirs (tool-contracts §2.1): slot order, never a host path, never an error. */
export const listWorkdirs = (workdirs: ReadonlyArray<Workdir>): ListWorkdirsOutput => ({
  workdirs: workdirs.map((w) => ({
    alias: w.alias,
    description: w.description,
    access: w.readOnly ? "read-only" : "read-write",
    binary_transfer: w.binaryTransferEnabled,
    agent_mode: w.agentMode,
    agent_runtimes: [...w.agentRuntimes]
  }))
})
