import { InteractionEnded } from "@serverfs/adapters/port"
import {
  type AgentError,
  AgentInteractionTimedOut,
  AgentInteractionTooLarge,
  type Answer,
  ApprovalPayload,
  ApprovalResolution,
  checkAnswers,
  checkDecision,
  Decision,
  InvalidApprovalDecision,
  InvalidQuestionAnswer,
  MAX_INTERACTION_BYTES,
  PermissionOutsidePolicy,
  QuestionPayload,
  QuestionResolution,
  RequestAlreadyResolved,
  RequestNotFound,
  RequestStale,
  type ResolvedResult
} from "@serverfs/domain"
import { type PendingRequestRecord, type TaskRecord, TaskStore } from "@serverfs/store"
import { Clock, DateTime, Deferred, Effect, Either, Fiber, Option, Schema } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { TaskObservations } from "../diagnostics/TaskObservations.js"
import { type LiveTask, LiveTaskRegistry, type Resolution } from "./LiveTasks.js"
import { TaskEvents } from "./TaskEvents.js"
import { TaskQueries } from "./TaskQueries.js"
import { TaskStatusFeed } from "./TaskStatusFeed.js"
import { Terminations } from "./Terminations.js"

const decodeResolution = Schema.decodeUnknown(
  Schema.parseJson(Schema.Union(ApprovalResolution, QuestionResolution))
)
const decodeApproval = Schema.decodeUnknown(Schema.parseJson(ApprovalPayload))
const decodeQuestion = Schema.decodeUnknown(Schema.parseJson(QuestionPayload))

type Kind = "approval" | "question"

/**
 * Approvals and questions (spec v0.3 §14/§15, bridge-internals §7): persisted — the task now
 * waits — before they are exposed, then awaited; resolved compare-and-set by the human; expired
 * (the task interrupted with AGENT_INTERACTION_TIMED_OUT) when unanswered in time. Nothing is
 * ever auto-approved. A stored row this process wrote and fails to decode is a defect.
 */
export class InteractionBroker extends Effect.Service<InteractionBroker>()(
  "@serverfs/bridge/InteractionBroker",
  {
    effect: Effect.gen(function* () {
      const store = yield* TaskStore
      const events = yield* TaskEvents
      const live = yield* LiveTaskRegistry
      const feed = yield* TaskStatusFeed
      const terminations = yield* Terminations
      const queries = yield* TaskQueries
      const settings = yield* BridgeSettingsTag
      const observations = yield* TaskObservations

      /**
       * The interaction outlived its lifetime (before the task deadline): the task is interrupted
       * and its run stopped like every other end. Uninterruptible: the terminal move stales the
       * interaction, whose end interrupts this timer's fiber — which must not cut the stop off
       * (it did: the Codex run then held the lease until its own bound ran out).
       */
      const expire = (task: TaskRecord, requestId: string, kind: Kind) =>
        Effect.gen(function* () {
          const request = yield* store.getPendingRequest(requestId)
          if (Option.isNone(request) || request.value.status !== "pending") return
          yield* observations.waitEnded(task.task_id, "expired")
          yield* events.append(task.task_id, "interaction.expired", { request_id: requestId, kind })
          const ended = yield* terminations.terminate(
            task.task_id,
            new AgentInteractionTimedOut({ message: "the approval or question was not answered in time" })
          )
          if (ended) yield* terminations.stopRun(task.runtime, task.task_id, "expired")
        }).pipe(Effect.uninterruptible)

      /**
       * Relay one approval or question: persisted (the task now waits) before it is exposed, then
       * awaited. An expiry earlier than the task deadline has its own timer; a provider that
       * withdraws its request (interrupting this effect) makes the ServerFS request stale.
       */
      const interact = (
        task: TaskRecord,
        liveTask: LiveTask,
        kind: Kind,
        payload: ApprovalPayload | QuestionPayload
      ): Effect.Effect<Resolution, InteractionEnded> =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const deadline = DateTime.toEpochMillis(DateTime.unsafeMake(task.deadline_at))
          const expiresMillis = Math.min(now + settings.interactionTimeoutSeconds * 1000, deadline)
          // The task's events so far are committed before it is seen waiting; the request, the
          // waiting status and its `<kind>.requested` event then go in one transaction.
          yield* events.flush
          const created = yield* store
            .createPendingRequest(
              task.task_id,
              kind,
              payload,
              DateTime.formatIso(DateTime.unsafeMake(expiresMillis)),
              { maxInteractionBytes: MAX_INTERACTION_BYTES },
              events.limits
            )
            .pipe(Effect.either)
          if (Either.isLeft(created)) {
            if (created.left instanceof AgentInteractionTooLarge) {
              const ended = yield* terminations.terminate(
                task.task_id,
                new AgentInteractionTooLarge({
                  message: "the provider's request exceeds the interaction limit"
                })
              )
              if (ended) yield* terminations.stopRun(task.runtime, task.task_id, "cancelled")
            }
            return yield* new InteractionEnded({ reason: "cancelled" })
          }
          // Spec v0.22 §9.2: the human wait starts only now that the task is durably waiting
          // (the checks before the commit were bridge work, still inside the execution stretch).
          yield* observations.waiting(task.task_id, kind)
          yield* feed.refresh(task.task_id)
          return yield* awaitAnswer(task, liveTask, kind, created.right.request.request_id, expiresMillis)
        })

      /**
       * A stored pending request of a task re-attached after a bridge restart, which its provider
       * replayed (the caller proved the match): the same ServerFS request is awaited again, with
       * its stored expiry. The wait is this process's (spec v0.22 §9.2).
       */
      const rebind = (
        task: TaskRecord,
        liveTask: LiveTask,
        kind: Kind,
        request: PendingRequestRecord
      ): Effect.Effect<Resolution, InteractionEnded> =>
        Effect.zipRight(
          observations.waiting(task.task_id, kind),
          awaitAnswer(
            task,
            liveTask,
            kind,
            request.request_id,
            DateTime.toEpochMillis(DateTime.unsafeMake(request.expires_at))
          )
        )

      /** Wait for the human on a committed request: its waiter, its expiry timer, its staling. */
      const awaitAnswer = (
        task: TaskRecord,
        liveTask: LiveTask,
        kind: Kind,
        requestId: string,
        expiresMillis: number
      ): Effect.Effect<Resolution, InteractionEnded> =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const deadline = DateTime.toEpochMillis(DateTime.unsafeMake(task.deadline_at))
          const waiter = yield* Deferred.make<Resolution, InteractionEnded>()
          liveTask.waiters.set(requestId, waiter)
          // The request was visible from its commit on: an answer (or a terminal move) may have
          // landed before the waiter was registered. The stored row is the truth; settle from it.
          const stored = yield* store.getPendingRequest(requestId)
          if (
            Option.isSome(stored) &&
            stored.value.status === "resolved" &&
            stored.value.resolution_json !== null
          ) {
            yield* Deferred.succeed(
              waiter,
              yield* Effect.orDie(decodeResolution(stored.value.resolution_json))
            )
          } else if (Option.isSome(stored) && stored.value.status === "stale") {
            yield* Deferred.fail(waiter, new InteractionEnded({ reason: "stale" }))
          }
          const expiry =
            expiresMillis < deadline
              ? Option.some(
                  yield* live.detach(
                    Effect.zipRight(
                      Effect.sleep(Math.max(0, expiresMillis - now)),
                      expire(task, requestId, kind)
                    )
                  )
                )
              : Option.none()
          return yield* Deferred.await(waiter).pipe(
            // Control goes back to the provider: its next execution stretch (a no-op once sealed).
            Effect.tapBoth({
              onSuccess: () => observations.resumed(task.task_id, "ok"),
              onFailure: (ended) => observations.resumed(task.task_id, ended.reason)
            }),
            Effect.onInterrupt(() =>
              // The provider withdrew its request (e.g. Codex serverRequest/resolved): stale it.
              store.abandonPendingRequest(task.task_id, requestId).pipe(
                Effect.flatMap((r) =>
                  r.staled
                    ? Effect.zipRight(
                        feed.refresh(task.task_id),
                        Effect.zipRight(
                          events.append(task.task_id, "interaction.stale", { request_id: requestId }),
                          // The provider goes on without an answer.
                          observations.resumed(task.task_id, "stale")
                        )
                      )
                    : Effect.void
                ),
                Effect.ignore
              )
            ),
            Effect.ensuring(
              Effect.zipRight(
                Effect.sync(() => liveTask.waiters.delete(requestId)),
                Option.match(expiry, { onNone: () => Effect.void, onSome: (f) => Fiber.interruptFork(f) })
              )
            )
          )
        })

      // ---- human answers ------------------------------------------------------------------------
      const pendingFor = (task: TaskRecord, requestId: string) =>
        Effect.gen(function* () {
          const request = yield* store.getPendingRequest(requestId)
          if (Option.isNone(request) || request.value.task_id !== task.task_id) {
            return yield* new RequestNotFound({ message: "no such request for this task" })
          }
          const r = request.value
          if (r.status === "resolved")
            return yield* new RequestAlreadyResolved({ message: "the request was already answered" })
          if (r.status === "stale" || task.pending_request_id !== r.request_id) {
            return yield* new RequestStale({ message: "the request is no longer current" })
          }
          return r
        })

      /**
       * Store the resolution compare-and-set, record it, and hand it to the waiting provider. A
       * `cancel_task` decision cancels the task before the provider hears it — the provider's
       * reaction (a stopped turn) can then never overtake the decision and fail the task — and
       * its run is then stopped the one way (`Terminations.stopRun`).
       */
      const resolve = (
        task: TaskRecord,
        requestId: string,
        resolution: Resolution,
        event: string,
        payload: object
      ) =>
        Effect.gen(function* () {
          const taskId = task.task_id
          yield* store.resolveRequest(taskId, requestId, resolution, {
            maxInteractionBytes: MAX_INTERACTION_BYTES
          })
          // The answer is committed: the external wait ends here (§9.2), not when the provider resumes.
          yield* observations.waitEnded(taskId, "ok")
          yield* feed.refresh(taskId)
          yield* events.append(taskId, event, { ...payload })
          const cancelTask = "decision" in resolution && resolution.decision === "cancel_task"
          const cancelled = cancelTask && (yield* terminations.cancelled(taskId))
          yield* live.resolveWaiter(taskId, requestId, resolution)
          if (cancelled) yield* terminations.stopRun(task.runtime, taskId, "cancelled")
        })

      const respondApproval = (
        taskId: string,
        requestId: string,
        decisionText: string,
        granted: ReadonlyArray<string>
      ): Effect.Effect<ResolvedResult, AgentError> =>
        Effect.gen(function* () {
          const task = yield* queries.requireTask(taskId)
          const request = yield* pendingFor(task, requestId)
          if (request.kind !== "approval")
            return yield* new InvalidApprovalDecision({ message: "the request is not an approval" })
          if (!Schema.is(Decision)(decisionText)) {
            return yield* new InvalidApprovalDecision({
              message: "decision must be approve_once, approve_session, deny or cancel_task"
            })
          }
          const payload = yield* Effect.orDie(decodeApproval(request.payload_json))
          const verdict = checkDecision(payload, decisionText, granted)
          if (verdict._tag === "invalid-decision")
            return yield* new InvalidApprovalDecision({ message: verdict.problem })
          if (verdict._tag === "outside-policy")
            return yield* new PermissionOutsidePolicy({ message: verdict.problem })
          const resolution: ApprovalResolution = {
            decision: decisionText,
            granted_permission_ids: [...granted]
          }
          yield* resolve(task, requestId, resolution, "approval.resolved", { decision: decisionText })
          return {
            task_id: taskId,
            request_id: requestId,
            resolved: true as const,
            correlation_id: task.correlation_id
          }
        })

      const answerQuestion = (
        taskId: string,
        requestId: string,
        answers: ReadonlyArray<Answer>
      ): Effect.Effect<ResolvedResult, AgentError> =>
        Effect.gen(function* () {
          const task = yield* queries.requireTask(taskId)
          const request = yield* pendingFor(task, requestId)
          if (request.kind !== "question")
            return yield* new InvalidQuestionAnswer({ message: "the request is not a question" })
          const problem = checkAnswers(yield* Effect.orDie(decodeQuestion(request.payload_json)), answers)
          if (problem !== undefined) return yield* new InvalidQuestionAnswer({ message: problem })
          const resolution: QuestionResolution = {
            answers: answers.map((a) => ({
              question_id: a.question_id,
              selected_option_ids: [...a.selected_option_ids],
              ...(a.text === undefined ? {} : { text: a.text })
            }))
          }
          yield* resolve(task, requestId, resolution, "question.answered", {
            question_count: answers.length
          })
          return {
            task_id: taskId,
            request_id: requestId,
            resolved: true as const,
            correlation_id: task.correlation_id
          }
        })

      return { interact, rebind, respondApproval, answerQuestion } as const
    })
  }
) {}
