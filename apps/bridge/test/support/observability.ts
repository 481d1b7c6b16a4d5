/**
 * Test support for the diagnostics and metrics suites: the three read-only methods through the
 * real client, a task's trace once sealed, metric values by name and labels, and a scripted task
 * driven through its approvals.
 */
import type { DiagnosticsTaskResult, MetricSeries, TaskStatus } from "@serverfs/domain"
import type { BridgeClientService } from "@serverfs/rpc"
import { call, getTask, TERMINAL, waitUntil } from "./rpcCalls.js"

export type Available = Extract<DiagnosticsTaskResult, { readonly disposition: "available" }>

export const diagnosticsTask = (client: BridgeClientService, taskId: string) =>
  call(client, "diagnostics.task", { task_id: taskId })

export const diagnosticsSnapshot = (client: BridgeClientService) => call(client, "diagnostics.snapshot", {})

export const metricsSnapshot = (client: BridgeClientService) => call(client, "metrics.snapshot", {})

/** The task's trace once its seal is written (the seal follows the terminal commit). */
export const sealedTrace = (client: BridgeClientService, taskId: string): Promise<Available> =>
  waitUntil(`the seal of ${taskId}`, async () => {
    const result = await diagnosticsTask(client, taskId)
    if (result.disposition !== "available") throw new Error(`${taskId}: ${JSON.stringify(result)}`)
    return result.seal === null ? undefined : result
  })

/** A series' value (0 when absent): counters and gauges their value, histograms their count. */
export const metricValue = (
  series: ReadonlyArray<MetricSeries>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number =>
  series
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)

export const metricOf = async (
  client: BridgeClientService,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): Promise<number> => metricValue((await metricsSnapshot(client)).series, name, labels)

/**
 * Answer each approval the task asks (approve_once), `delayMs` after seeing it, until the task
 * ends; returns its final status.
 */
export const approveUntilEnd = async (
  client: BridgeClientService,
  taskId: string,
  delayMs = 0
): Promise<TaskStatus> => {
  let answered = new Set<string>()
  for (;;) {
    const view = await waitUntil(`${taskId} to ask or end`, async () => {
      const v = await getTask(client, taskId)
      return TERMINAL.includes(v.status) ||
        (v.status === "waiting_for_approval" &&
          v.pending_request !== undefined &&
          !answered.has(v.pending_request.request_id))
        ? v
        : undefined
    })
    if (TERMINAL.includes(view.status) || view.pending_request === undefined) return view.status
    answered = new Set([...answered, view.pending_request.request_id])
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
    await call(client, "task.approval.respond", {
      task_id: taskId,
      request_id: view.pending_request.request_id,
      decision: "approve_once"
    })
  }
}

/** Every string in a JSON value (keys included), for the privacy sentinels. */
export const jsonText = (value: unknown): string => JSON.stringify(value)
