import type { LeaseOutcome, RecoveryOutcome, RuntimeFamily, TerminalOutcome } from "@serverfs/domain"
import { AgentMetrics, queueDepth } from "@serverfs/telemetry-local"
import { Context, type Effect, Metric } from "effect"

/**
 * What the bridge's task plane feeds the process-local metrics (AgentMetrics), as one value read
 * from the context: production uses the default below and provides nothing; a fault-injection
 * test provides a projection that throws (spec v0.22 §9.3: an unexpected metric-projection
 * exception must leave the terminal transition authoritative).
 */
export interface MetricProjectionService {
  readonly taskTerminal: (
    outcome: TerminalOutcome,
    runtime: RuntimeFamily,
    durationSeconds: number
  ) => Effect.Effect<void>
  readonly queued: Effect.Effect<void>
  /** The task started: it leaves the queue after `waitSeconds`. */
  readonly dequeued: (runtime: RuntimeFamily, waitSeconds: number) => Effect.Effect<void>
  /** The task ended while queued (cancelled, not schedulable): it leaves the queue without a wait sample. */
  readonly leftQueue: Effect.Effect<void>
  readonly leaseAcquire: (outcome: LeaseOutcome, durationSeconds: number) => Effect.Effect<void>
  readonly recovery: (outcome: RecoveryOutcome) => Effect.Effect<void>
}

export class MetricProjection extends Context.Reference<MetricProjection>()(
  "@serverfs/bridge/MetricProjection",
  {
    defaultValue: (): MetricProjectionService => ({
      taskTerminal: AgentMetrics.taskTerminal,
      queued: AgentMetrics.queued,
      dequeued: AgentMetrics.dequeued,
      leftQueue: Metric.incrementBy(queueDepth, -1),
      leaseAcquire: AgentMetrics.leaseAcquire,
      recovery: AgentMetrics.recovery
    })
  }
) {}
