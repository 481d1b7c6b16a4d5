import type { Answer, RuntimeInfo } from "@serverfs/domain"
import { Effect, type Stream } from "effect"
import { BridgeDiagnostics } from "../diagnostics/BridgeDiagnostics.js"
import { OperatorQueries } from "../operator/OperatorQueries.js"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { InteractionBroker } from "./InteractionBroker.js"
import { Recovery } from "./Recovery.js"
import { Retention } from "./Retention.js"
import { RuntimeModels } from "./RuntimeModels.js"
import { Submission } from "./Submission.js"
import { TaskControl } from "./TaskControl.js"
import { TaskQueries } from "./TaskQueries.js"
import { type StatusChange, TaskStatusFeed } from "./TaskStatusFeed.js"

/**
 * The bridge's task service (spec v0.3 §10–§19, v0.7, bridge-internals §6–§10), as the RPC
 * handlers see it: a facade over the task plane's services — Submission, TurnRunner,
 * ResultPublisher, InteractionBroker, TaskControl (cancel, deadlines, shutdown), Recovery,
 * Retention, TaskQueries — wired in Layers.ts. Every status change goes through Terminations and
 * the store's transition table. Nothing is ever auto-approved, fabricated or silently re-run.
 */
export class TaskService extends Effect.Service<TaskService>()("@serverfs/bridge/TaskService", {
  effect: Effect.gen(function* () {
    const submission = yield* Submission
    const queries = yield* TaskQueries
    const broker = yield* InteractionBroker
    const control = yield* TaskControl
    const recovery = yield* Recovery
    const retention = yield* Retention
    const registry = yield* RuntimeRegistry
    const feed = yield* TaskStatusFeed
    const diagnostics = yield* BridgeDiagnostics
    const operator = yield* OperatorQueries
    const runtimeModels = yield* RuntimeModels

    return {
      submit: submission.submit,
      get: queries.get,
      events: queries.events,
      readResult: queries.readResult,
      // A cancel_task decision also cancels the task (the broker commits it before this returns).
      respondApproval: broker.respondApproval,
      answerQuestion: (taskId: string, requestId: string, answers: ReadonlyArray<Answer>) =>
        broker.answerQuestion(taskId, requestId, answers),
      sendMessage: control.sendMessage,
      cancel: control.cancel,
      runtimes: () =>
        Effect.map(registry.list(), (list): { runtimes: Array<RuntimeInfo> } => ({ runtimes: [...list] })),
      /** runtime.models (v0.9): a runtime's models, and advice mode's checks. */
      models: runtimeModels.models,
      collectGarbage: retention.collectGarbage,
      reconcileAtStartup: recovery.reconcileAtStartup,
      /** Every status change from the moment of subscription (tests and long polling wait on it). */
      statusChanges: feed.changes satisfies Stream.Stream<StatusChange>,
      // Spec v0.22 §8: read-only views of the recorder and the metrics.
      diagnosticsSnapshot: diagnostics.snapshot,
      diagnosticsTask: diagnostics.task,
      metricsSnapshot: diagnostics.metrics,
      // The operator CLI's methods (issue 10).
      listTasks: operator.listTasks,
      listLeases: operator.listLeases,
      recoverGuard: operator.recoverGuard
    } as const
  })
}) {}
