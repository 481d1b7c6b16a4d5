import type {
  BridgeMethod,
  FrozenErrorCode,
  LeaseOutcome,
  RecoveryOutcome,
  RuntimeFamily,
  TerminalOutcome
} from "@serverfs/domain"
import { Effect, Metric, MetricBoundaries } from "effect"

/**
 * The bridge's process-local metrics (the v0.21 base of spec v0.22 §3) as Effect Metrics. Every
 * label takes its value from a closed vocabulary (the catalog's outcomes, the runtime families,
 * the contract's method names, the frozen error codes): no caller text ever becomes a label.
 * They reset with the process; `metrics.snapshot` reads them.
 */
const seconds = MetricBoundaries.exponential({ start: 0.001, factor: 4, count: 10 })

export const taskTerminalTotal = Metric.counter("serverfs_agent_tasks_terminal_total", {
  description: "Tasks that reached a terminal status, by outcome and runtime family.",
  incremental: true
})
export const taskDurationSeconds = Metric.histogram(
  "serverfs_agent_task_duration_seconds",
  MetricBoundaries.exponential({ start: 0.01, factor: 4, count: 10 }),
  "Task creation to terminal transition (wall clock), by outcome and runtime family."
)
export const queueDepth = Metric.gauge("serverfs_agent_queue_depth", {
  description: "Tasks created and not yet started."
})
export const queueWaitSeconds = Metric.histogram(
  "serverfs_agent_queue_wait_seconds",
  seconds,
  "Task creation to start, by runtime family."
)
export const leaseAcquireSeconds = Metric.histogram(
  "serverfs_agent_lease_acquire_seconds",
  seconds,
  "Writer-lease acquisition calls by outcome (busy is a rejection, not a wait)."
)
export const recoveryTotal = Metric.counter("serverfs_agent_recovery_total", {
  description: "Restart and guard reconciliations by outcome.",
  incremental: true
})
export const rpcCallsTotal = Metric.counter("serverfs_bridge_rpc_calls_total", {
  description: "Private RPC calls by method and outcome (ok, a frozen error code, or fault).",
  incremental: true
})
export const rpcDurationSeconds = Metric.histogram(
  "serverfs_bridge_rpc_duration_seconds",
  seconds,
  "Private RPC handling time by method."
)

/** An RPC call's outcome label: ok, one of the method's frozen codes, or fault (a defect). */
export type RpcOutcome = "ok" | "fault" | FrozenErrorCode

/** Recording functions: the only way the bridge touches the metrics (labels typed). */
export const AgentMetrics = {
  taskTerminal: (outcome: TerminalOutcome, runtime: RuntimeFamily, durationSeconds: number) =>
    Effect.zipRight(
      Metric.update(
        taskTerminalTotal.pipe(Metric.tagged("outcome", outcome), Metric.tagged("runtime_family", runtime)),
        1
      ),
      Metric.update(
        taskDurationSeconds.pipe(Metric.tagged("outcome", outcome), Metric.tagged("runtime_family", runtime)),
        durationSeconds
      )
    ),
  queued: Metric.incrementBy(queueDepth, 1),
  dequeued: (runtime: RuntimeFamily, waitSeconds: number) =>
    Effect.zipRight(
      Metric.incrementBy(queueDepth, -1),
      Metric.update(queueWaitSeconds.pipe(Metric.tagged("runtime_family", runtime)), waitSeconds)
    ),
  leaseAcquire: (outcome: LeaseOutcome, durationSeconds: number) =>
    Metric.update(leaseAcquireSeconds.pipe(Metric.tagged("outcome", outcome)), durationSeconds),
  recovery: (outcome: RecoveryOutcome) =>
    Metric.update(recoveryTotal.pipe(Metric.tagged("outcome", outcome)), 1),
  rpcCall: (method: BridgeMethod, outcome: RpcOutcome, durationSeconds: number) =>
    Effect.zipRight(
      Metric.update(
        rpcCallsTotal.pipe(Metric.tagged("method", method), Metric.tagged("outcome", outcome)),
        1
      ),
      Metric.update(rpcDurationSeconds.pipe(Metric.tagged("method", method)), durationSeconds)
    )
} as const
