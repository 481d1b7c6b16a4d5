import * as fs from "node:fs"

/** Resident memory of one process, from /proc/<pid>/status (kB → MiB). */
export interface Memory {
  /** VmRSS: resident now. */
  readonly rssMiB: number
  /** VmHWM: the peak resident size so far. */
  readonly peakMiB: number
}

const field = (status: string, name: string): number => {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status)
  if (match === null) throw new Error(`/proc status has no ${name}`)
  return Number(match[1]) / 1024
}

export const memoryOf = (pid: number): Memory => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return { rssMiB: field(status, "VmRSS"), peakMiB: field(status, "VmHWM") }
}
