import type { AgentModeSetting, RuntimeName } from "./AgentSettings.js"
import type { DenyPolicy } from "./DenyPolicy.js"

/**
 * One enabled workdir with its effective, immutable policy (tool-contracts §4.3). `hostPath` is
 * the administrator's directory: it is opened once at startup and never appears in any output.
 */
export interface Workdir {
  /** Slot number 1..16 (WORKDIR_01 … WORKDIR_16). */
  readonly slot: number
  readonly alias: string
  readonly description: string | null
  readonly readOnly: boolean
  readonly hostPath: string
  /**
   * `dev:ino` of hostPath when the overlap check looked at it. The held root must be this very
   * directory: a parent renamed between the check and the open could otherwise point the root
   * into another workdir. Absent only for workdirs built by hand in tests.
   */
  readonly directoryId?: string
  readonly policy: DenyPolicy
  readonly maxReadBytes: number
  readonly maxReadLines: number
  readonly maxWriteBytes: number
  /** download_binary_file / upload_binary_file allowed here (tool-contracts §2.12–§2.13). */
  readonly binaryTransferEnabled: boolean
  readonly maxBinaryTransferBytes: number
  readonly agentMode: AgentModeSetting
  readonly agentRuntimes: ReadonlyArray<RuntimeName>
}

export const slotId = (slot: number): string => String(slot).padStart(2, "0")
