import * as path from "node:path"
import {
  InteractionEnded,
  type ProviderAdapter,
  type RecordedTurn,
  TurnFileRefused,
  type TurnFiles,
  type TurnSink
} from "@serverfs/adapters/port"
import {
  AgentDisabled,
  type AgentError,
  AgentIdempotencyConflict,
  AgentInteractionTooLarge,
  AgentMessageTooLarge,
  AgentProfileNotAllowed,
  AgentPromptTooLarge,
  AgentResultNotRetrievable,
  AgentRuntimeNotAllowed,
  AgentRuntimeUnavailable,
  AgentSessionNotResumable,
  AgentStorageLimitReached,
  AgentTaskNotActive,
  AgentTaskNotFound,
  AgentTaskTerminal,
  type Answer,
  type ApprovalPayload,
  type ApprovalResolution,
  type CancelResult,
  checkAnswers,
  checkDecision,
  Decision,
  type EventsResult,
  InvalidApprovalDecision,
  InvalidLimit,
  InvalidQuestionAnswer,
  InvalidWorkdirPath,
  isTerminal,
  isWaiting,
  type MessageResult,
  PermissionOutsidePolicy,
  profileRank,
  type QuestionPayload,
  type QuestionResolution,
  RequestAlreadyResolved,
  RequestNotFound,
  RequestStale,
  type ResolvedResult,
  type ResultReadResult,
  type RuntimeInfo,
  renderError,
  type SubmitParams,
  type SubmitResult,
  sha256Hex,
  type TaskStatus,
  type TaskView,
  type WorkdirBusy,
  type WorkdirNotFound,
  WorkdirPathNotFound,
  WorkdirRecoveryRequired
} from "@serverfs/domain"
import {
  Configuration,
  NATIVE_RUNTIMES,
  resolvePath,
  resultShareBytes,
  taskShareBytes,
  type Workdir,
  WorkdirRegistry
} from "@serverfs/policy"
import { O } from "@serverfs/posix"
import {
  type EventLimits,
  type EventRefusal,
  MAX_EVENTS_PAGE,
  MAX_RESULT_CHUNK_BYTES,
  makeTaskId,
  ResultSpool,
  type TaskRecord,
  TaskStore,
  type TransitionPatch,
  utf8Length,
  utf8Prefix
} from "@serverfs/store"
import { AuditLog } from "@serverfs/telemetry-local"
import { leaseHolderMutations, openDirectory, WorkdirRoots } from "@serverfs/workspace"
import { Clock, Deferred, Effect, Either, Fiber, FiberSet, Option, Schema } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { Redactor } from "../Redaction.js"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { makeEventWriter } from "./EventWriter.js"
import { type LiveTask, newLiveTask } from "./LiveTasks.js"
import { buildManifest } from "./ManifestBuilder.js"
import {
  checkCorrelationId,
  checkIdempotencyKey,
  checkModel,
  MAX_INTERACTION_BYTES,
  MAX_MESSAGE_BYTES,
  requestFingerprint
} from "./SubmitChecks.js"
import { taskView } from "./TaskViews.js"

/**
 * The bridge's task service (spec v0.3 §10–§19, v0.7, bridge-internals §6–§10): submission with
 * authorization, idempotency and the writer lease; one background fiber driving each task's
 * turn through its adapter; approvals and questions persisted before they are exposed and
 * resolved compare-and-set; terminal-first cancel; deadlines and interaction expiry; result
 * spooling. Every status change goes through the store, which applies the domain's transition
 * table. Nothing is ever auto-approved, fabricated or silently re-run.
 */
const PREVIEW_BYTES = 65_536
const DEFAULT_EVENTS_LIMIT = 100

const isoAfter = (millis: number, seconds: number) => new Date(millis + seconds * 1000).toISOString()

/**
 * Let pending I/O and other fibers run, at most every few milliseconds. A provider streaming
 * events without pause would otherwise keep the event loop from polling sockets and keep the
 * store's single connection (a semaphore its releaser re-takes at once): every RPC — task.get,
 * cancel, answers — would wait until the stream stops. setImmediate runs right after the poll
 * phase, without a timer's delay.
 */
const FAIRNESS_SLICE_MS = 5
let lastEventLoopTurn = 0
const yieldToEventLoop: Effect.Effect<void> = Effect.suspend(() => {
  const now = performance.now()
  if (now - lastEventLoopTurn < FAIRNESS_SLICE_MS) return Effect.void
  lastEventLoopTurn = now
  return Effect.async<void>((resume) => {
    const handle = setImmediate(() => resume(Effect.void))
    return Effect.sync(() => clearImmediate(handle))
  })
})

type Resolution = ApprovalResolution | QuestionResolution

export class TaskService extends Effect.Service<TaskService>()("@serverfs/bridge/TaskService", {
  scoped: Effect.gen(function* () {
    const store = yield* TaskStore
    const spool = yield* ResultSpool
    const registry = yield* RuntimeRegistry
    const leases = yield* BridgeLeases
    const { workdirs } = yield* Configuration
    const registryOfWorkdirs = yield* WorkdirRegistry
    const roots = yield* WorkdirRoots
    const settings = yield* BridgeSettingsTag
    const audit = yield* AuditLog
    // The workspace's mutations as this bridge runs them: as the holder of the task's lease.
    const mutations = yield* leaseHolderMutations((workdir) => leases.holds(workdir.slot))

    /**
     * Writes for an in-process runtime's turn (the scripted `write:`): only a workspace-write
     * task that holds its workdir's lease, through the same checks as an MCP create/edit, at a
     * path below the task's directory. A review task never writes.
     */
    const filesFor = (task: TaskRecord, workdir: Workdir, liveTask: LiveTask): TurnFiles => ({
      writeText: (relative, content) =>
        Effect.suspend(() => {
          if (task.profile !== "workspace-write" || liveTask.leaseSlot !== workdir.slot) {
            return Effect.fail(new TurnFileRefused({ message: "a review task does not write files" }))
          }
          const target = task.relative_cwd === "" ? relative : `${task.relative_cwd}/${relative}`
          return mutations.writeTextFile({ workdir: workdir.alias, path: target, content }).pipe(
            Effect.asVoid,
            Effect.mapError((error) => new TurnFileRefused({ message: renderError(error) }))
          )
        })
    })

    // The disk budget (issue 14): every active task may use one share of it (half the budget
    // divided among the task slots) — its events up to the share less room for its largest
    // result — and what the active tasks may still write is kept free; finished tasks are
    // evicted to keep the rest within the budget.
    const taskShare = taskShareBytes(settings)
    const EVENT_LIMITS: EventLimits = {
      maxEventsPerTask: settings.maxEventsPerTask,
      maxEventBytes: settings.maxEventBytes,
      maxStoredBytesPerTask: taskShare - resultShareBytes(settings)
    }
    /** An event the store refused to keep: logged and dropped, the task goes on. */
    const eventDropped = (taskId: string, eventType: string, refusal: EventRefusal) =>
      audit.emit("WARNING", "event_dropped", {
        task_id: taskId,
        event_type: eventType,
        error_code: refusal._tag
      })

    // The event writer comes before everything with a finalizer here (the task fibers above all),
    // so that its last flush runs after them: a task stopped at shutdown still records its end.
    const eventWriter = yield* makeEventWriter(store, {
      limits: EVENT_LIMITS,
      onRefused: (event, refusal) => eventDropped(event.taskId, event.eventType, refusal),
      onFailure: (count, errorCode) =>
        audit.emit("ERROR", "event_batch_lost", { events: count, error_code: errorCode })
    })

    const submitLock = yield* Effect.makeSemaphore(1)
    const fibers = yield* FiberSet.make()
    const live = new Map<string, LiveTask>()
    const allRoots = workdirs.map((w) => w.hostPath)

    const redactorFor = (workdir: Workdir) => new Redactor(workdir.hostPath, allRoots)

    // ---- events -------------------------------------------------------------------------------
    /** Append an event and wait for its commit; a refused one (too large, limit) is logged and dropped. */
    const tryEvent = (
      taskId: string,
      eventType: string,
      payload: Record<string, unknown>
    ): Effect.Effect<void> => eventWriter.append({ taskId, eventType, payload })

    /**
     * Move a task to a terminal status (or interrupted/failed/cancelled) unless it already is
     * terminal. The task's queued events are committed first; the status, the staling of its
     * pending request and the terminal event then go in one transaction, so no reader sees the
     * end of a task before everything that led there. Returns whether this call made the change.
     */
    const terminate = (
      taskId: string,
      to: "succeeded" | "failed" | "cancelled" | "interrupted",
      patch: TransitionPatch,
      event: { readonly type: string; readonly payload: Record<string, unknown> }
    ): Effect.Effect<boolean> =>
      Effect.zipRight(
        eventWriter.flush,
        store.transition(taskId, to, patch, {
          eventType: event.type,
          payload: event.payload,
          limits: EVENT_LIMITS
        })
      ).pipe(
        Effect.flatMap((result) =>
          Effect.zipRight(
            Effect.zipRight(
              Option.match(result.staledRequestId, {
                onNone: () => Effect.void,
                onSome: (requestId) =>
                  failWaiter(taskId, requestId, to === "cancelled" ? "cancelled" : "stale")
              }),
              Option.match(result.eventRefusal, {
                onNone: () => Effect.void,
                onSome: (refusal) => eventDropped(taskId, event.type, refusal)
              })
            ),
            Effect.succeed(true)
          )
        ),
        Effect.catchAll(() => Effect.succeed(false)),
        Effect.tap((changed) =>
          changed
            ? audit.emit("INFO", "task_transition", {
                task_id: taskId,
                status: to,
                error_code: patch.error_code ?? undefined
              })
            : Effect.void
        )
      )

    const failWaiter = (taskId: string, requestId: string, reason: InteractionEnded["reason"]) =>
      Effect.suspend(() => {
        const waiter = live.get(taskId)?.waiters.get(requestId)
        return waiter === undefined
          ? Effect.void
          : Deferred.fail(waiter, new InteractionEnded({ reason })).pipe(Effect.asVoid)
      })

    /** Ask the provider to stop a task's turn, bounded; the bridge's decision stands either way. */
    const cancelProvider = (adapter: ProviderAdapter | undefined, taskId: string): Effect.Effect<void> =>
      adapter === undefined
        ? Effect.void
        : adapter
            .cancel(taskId)
            .pipe(Effect.timeout(`${settings.providerCancelTimeoutSeconds} seconds`), Effect.ignore)

    // ---- interactions -------------------------------------------------------------------------
    /**
     * Relay one approval or question: persisted (the task now waits) before it is exposed, then
     * awaited. An expiry earlier than the task deadline has its own timer; a provider that
     * withdraws its request (interrupting this effect) makes the ServerFS request stale.
     */
    const interact = <R extends Resolution>(
      task: TaskRecord,
      liveTask: LiveTask,
      adapter: ProviderAdapter,
      kind: "approval" | "question",
      payload: ApprovalPayload | QuestionPayload
    ): Effect.Effect<R, InteractionEnded> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const deadline = Date.parse(task.deadline_at)
        const expiresMillis = Math.min(now + settings.interactionTimeoutSeconds * 1000, deadline)
        const expiresAt = new Date(expiresMillis).toISOString()
        // The task's events so far are committed before it is seen waiting; the request, the
        // waiting status and its `<kind>.requested` event then go in one transaction.
        yield* eventWriter.flush
        const created = yield* store
          .createPendingRequest(
            task.task_id,
            kind,
            payload,
            expiresAt,
            { maxInteractionBytes: MAX_INTERACTION_BYTES },
            EVENT_LIMITS
          )
          .pipe(Effect.either)
        if (Either.isLeft(created)) {
          if (created.left instanceof AgentInteractionTooLarge) {
            yield* terminate(
              task.task_id,
              "failed",
              {
                error_code: created.left._tag,
                error_message: "the provider's request exceeds the interaction limit"
              },
              { type: "task.failed", payload: { error_code: created.left._tag } }
            )
          }
          return yield* new InteractionEnded({ reason: "cancelled" })
        }
        const requestId = created.right.request.request_id
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
          yield* Deferred.succeed(waiter, JSON.parse(stored.value.resolution_json) as Resolution)
        } else if (Option.isSome(stored) && stored.value.status === "stale") {
          yield* Deferred.fail(waiter, new InteractionEnded({ reason: "stale" }))
        }
        const expiry =
          expiresMillis < deadline
            ? Option.some(
                yield* FiberSet.run(
                  fibers,
                  Effect.zipRight(
                    Effect.sleep(expiresMillis - now),
                    expire(task.task_id, requestId, kind, adapter)
                  )
                )
              )
            : Option.none()
        return (yield* Deferred.await(waiter).pipe(
          Effect.onInterrupt(() =>
            // The provider withdrew its request (e.g. Codex serverRequest/resolved): stale it.
            store.abandonPendingRequest(task.task_id, requestId).pipe(
              Effect.flatMap((r) =>
                r.staled
                  ? tryEvent(task.task_id, "interaction.stale", { request_id: requestId })
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
        )) as R
      })

    /** The interaction outlived its lifetime (before the task deadline): the task is interrupted. */
    const expire = (
      taskId: string,
      requestId: string,
      kind: "approval" | "question",
      adapter: ProviderAdapter
    ) =>
      Effect.gen(function* () {
        const request = yield* store.getPendingRequest(requestId)
        if (Option.isNone(request) || request.value.status !== "pending") return
        yield* tryEvent(taskId, "interaction.expired", { request_id: requestId, kind })
        const liveTask = live.get(taskId)
        if (liveTask !== undefined) liveTask.stopReason = "interaction-expired"
        yield* terminate(
          taskId,
          "interrupted",
          {
            error_code: "AGENT_INTERACTION_TIMED_OUT",
            error_message: "the approval or question was not answered in time"
          },
          { type: "task.interrupted", payload: { error_code: "AGENT_INTERACTION_TIMED_OUT" } }
        )
        // Detached: failing the waiter ends the interaction, which stops this timer's fiber.
        yield* FiberSet.run(fibers, cancelProvider(adapter, taskId))
        yield* failWaiter(taskId, requestId, "expired")
      })

    const sinkFor = (
      task: TaskRecord,
      liveTask: LiveTask,
      adapter: ProviderAdapter,
      redactor: Redactor
    ): TurnSink => ({
      // Not awaited: the provider's stream goes on while the writer commits (see EventWriter).
      event: (eventType, payload) =>
        Effect.zipLeft(
          eventWriter.enqueue({ taskId: task.task_id, eventType, payload: redactor.record(payload) }),
          yieldToEventLoop
        ),
      nativeIds: (ids) =>
        store.setNativeIds(task.task_id, ids).pipe(
          Effect.flatMap((record) => updateGuard(record)),
          Effect.ignore
        ),
      requestApproval: (payload) =>
        interact<ApprovalResolution>(
          task,
          liveTask,
          adapter,
          "approval",
          redactor.record(payload as unknown as Record<string, unknown>) as unknown as ApprovalPayload
        ),
      requestQuestion: (payload) =>
        interact<QuestionResolution>(
          task,
          liveTask,
          adapter,
          "question",
          redactor.record(payload as unknown as Record<string, unknown>) as unknown as QuestionPayload
        )
    })

    // ---- leases and guards --------------------------------------------------------------------
    const guardFor = (task: TaskRecord, now: string) => ({
      schema_version: 1 as const,
      slot: task.workdir_slot,
      task_id: task.task_id,
      runtime: task.runtime,
      workdir_alias: task.workdir_alias,
      correlation_id: task.correlation_id,
      native_session_id: task.native_session_id,
      native_turn_id: task.native_turn_id,
      created_at: task.created_at,
      updated_at: now
    })

    /** Keep the guard's native ids current, so a restart can reconcile the exact turn. */
    const updateGuard = (task: TaskRecord): Effect.Effect<void> =>
      task.profile !== "workspace-write"
        ? Effect.void
        : Effect.flatMap(leases.readGuard(task.workdir_slot), (state) =>
            state._tag === "valid" && state.guard.task_id === task.task_id
              ? leases.writeGuard(guardFor(task, new Date().toISOString())).pipe(Effect.ignore)
              : Effect.void
          )

    /** The provider turn a task record names, as an adapter's reconcile takes it. */
    const recordedTurn = (task: TaskRecord): RecordedTurn => ({
      taskId: task.task_id,
      sessionId: task.native_session_id,
      turnId: task.native_turn_id
    })

    /** Remove a slot's guard if (and only if) it belongs to `taskId`. */
    const clearGuardOf = (slot: number, taskId: string): Effect.Effect<void> =>
      Effect.flatMap(leases.readGuard(slot), (state) =>
        state._tag === "valid" && state.guard.task_id === taskId ? leases.removeGuard(slot) : Effect.void
      )

    // ---- the run ------------------------------------------------------------------------------
    const finishSuccess = (task: TaskRecord, finalText: string, redactor: Redactor) =>
      Effect.gen(function* () {
        const text = redactor.text(finalText)
        const size = utf8Length(text)
        if (size > settings.maxFinalResponseBytes) {
          yield* terminate(
            task.task_id,
            "failed",
            {
              error_code: "AGENT_RESULT_TOO_LARGE",
              error_message: `the final response exceeds ${settings.maxFinalResponseBytes} bytes`
            },
            { type: "task.failed", payload: { error_code: "AGENT_RESULT_TOO_LARGE" } }
          )
          return
        }
        // Inline only if the result as JSON text fits the threshold: escaping can multiply its size
        // (a control character is 6 bytes as \\u00XX), and task.get must stay within one RPC frame.
        if (utf8Length(JSON.stringify(text)) - 2 <= settings.resultSpoolThresholdBytes) {
          const sha256 = sha256Hex(text)
          yield* terminate(
            task.task_id,
            "succeeded",
            {
              final_response: text,
              result_storage: "inline",
              result_size_bytes: size,
              result_sha256: sha256
            },
            { type: "task.completed", payload: { result_storage: "inline", result_size_bytes: size } }
          )
          return
        }
        const spooled = yield* spool.writeResult(task.task_id, text).pipe(Effect.either)
        if (Either.isLeft(spooled)) {
          yield* terminate(
            task.task_id,
            "failed",
            { error_code: spooled.left._tag, error_message: "the final response could not be stored" },
            { type: "task.failed", payload: { error_code: spooled.left._tag } }
          )
          return
        }
        yield* tryEvent(task.task_id, "task.result_spooled", {
          size_bytes: spooled.right.size_bytes,
          sha256: spooled.right.sha256
        })
        yield* terminate(
          task.task_id,
          "succeeded",
          {
            final_response: utf8Prefix(text, Math.min(PREVIEW_BYTES, settings.resultSpoolThresholdBytes)),
            result_storage: "spool",
            result_size_bytes: spooled.right.size_bytes,
            result_sha256: spooled.right.sha256
          },
          {
            type: "task.completed",
            payload: { result_storage: "spool", result_size_bytes: spooled.right.size_bytes }
          }
        )
      })

    const finishFailure = (taskId: string, error: AgentError) =>
      Effect.gen(function* () {
        const current = yield* store.getTask(taskId)
        if (Option.isNone(current) || isTerminal(current.value.status)) return
        // A waiting task cannot go straight to failed: an adapter error while waiting interrupts it.
        const waiting = isWaiting(current.value.status)
        yield* terminate(
          taskId,
          waiting ? "interrupted" : "failed",
          { error_code: error._tag, error_message: error.message },
          { type: waiting ? "task.interrupted" : "task.failed", payload: { error_code: error._tag } }
        )
      })

    const drive = (
      task: TaskRecord,
      prompt: string,
      adapter: ProviderAdapter,
      workdir: Workdir,
      liveTask: LiveTask,
      resume: { readonly sessionId: string } | null
    ): Effect.Effect<void> => {
      const redactor = redactorFor(workdir)
      let endedNormally = false
      const run = Effect.gen(function* () {
        const starting = yield* store.transition(task.task_id, "starting").pipe(Effect.either)
        if (Either.isLeft(starting)) return // cancelled while queued
        yield* tryEvent(task.task_id, "task.started", { runtime: task.runtime })
        const running = yield* store.transition(task.task_id, "running").pipe(Effect.either)
        if (Either.isLeft(running)) return
        const outcome = yield* adapter
          .run(
            {
              taskId: task.task_id,
              cwd: path.join(workdir.hostPath, task.relative_cwd),
              workdirRoot: workdir.hostPath,
              prompt,
              profile: task.profile === "review" ? "review" : "workspace-write",
              model: task.requested_model,
              resume,
              files: filesFor(task, workdir, liveTask)
            },
            sinkFor(task, liveTask, adapter, redactor)
          )
          .pipe(Effect.either)
        endedNormally = true
        if (Either.isRight(outcome)) yield* finishSuccess(task, outcome.right.finalText, redactor)
        else yield* finishFailure(task.task_id, outcome.left)
      })
      const cleanup = Effect.gen(function* () {
        live.delete(task.task_id)
        // interruptFork: the watcher may be the one stopping this turn; never wait on it here.
        if (liveTask.deadline !== undefined) yield* Fiber.interruptFork(liveTask.deadline)
        if (liveTask.stopReason === "shutdown") {
          yield* terminate(
            task.task_id,
            "interrupted",
            { error_code: "BRIDGE_SHUTDOWN", error_message: "the bridge stopped during the task" },
            { type: "task.interrupted", payload: { error_code: "BRIDGE_SHUTDOWN" } }
          )
        }
        const slot = liveTask.leaseSlot
        if (slot !== undefined) {
          // The guard goes only when the provider run is proven stopped (spec v0.7 §2.3).
          let stopped = endedNormally
          if (!stopped) {
            const current = yield* store.getTask(task.task_id)
            const result = yield* adapter.reconcile(
              Option.match(current, {
                onNone: (): RecordedTurn => ({ taskId: task.task_id, sessionId: null, turnId: null }),
                onSome: recordedTurn
              })
            )
            stopped = result.providerActive === false
          }
          if (stopped) yield* clearGuardOf(slot, task.task_id)
          yield* leases.release(slot)
        }
        yield* collectGarbage
      })
      return run.pipe(Effect.ensuring(cleanup))
    }

    // ---- submission ---------------------------------------------------------------------------
    const authorize = (params: SubmitParams, profile: "review" | "workspace-write") =>
      Effect.gen(function* () {
        const workdir = yield* registryOfWorkdirs.get(params.workdir)
        if (workdir.agentMode === "disabled") {
          return yield* new AgentDisabled({ message: `Agent delegation is disabled for ${workdir.alias}` })
        }
        if (!(workdir.agentRuntimes as ReadonlyArray<string>).includes(params.runtime)) {
          return yield* new AgentRuntimeNotAllowed({
            message: `runtime '${params.runtime}' is not allowed for ${workdir.alias}`
          })
        }
        if (profileRank(profile) > profileRank(workdir.agentMode)) {
          return yield* new AgentProfileNotAllowed({
            message: `profile ${profile} exceeds the workdir's ${workdir.agentMode} mode`
          })
        }
        if (NATIVE_RUNTIMES.has(params.runtime) && profile !== "workspace-write") {
          return yield* new AgentProfileNotAllowed({
            message: `runtime ${params.runtime} runs only with the workspace-write profile`
          })
        }
        // The start directory must exist and pass the workdir's full path policy.
        const invalidPath = new InvalidWorkdirPath({ message: "the task path is not a valid workdir path" })
        if (params.path.includes("\\")) return yield* invalidPath
        const resolved = yield* resolvePath(workdir, params.path).pipe(Effect.mapError(() => invalidPath))
        yield* Effect.scoped(
          openDirectory(roots.rootOf(workdir), resolved.components, O.PATH, {
            workdir: workdir.alias,
            path: params.path
          })
        ).pipe(
          Effect.mapError((e) =>
            e._tag === "PATH_NOT_FOUND"
              ? new WorkdirPathNotFound({ message: "the task path does not exist" })
              : e._tag === "NOT_A_DIRECTORY"
                ? new InvalidWorkdirPath({ message: "the task path is not a directory" })
                : invalidPath
          )
        )
        return { workdir, relativeCwd: resolved.relative }
      })

    /** A workspace-write slot's guard left by a run this process does not own (lazy path, §10). */
    const reconcileGuard = (slot: number, alias: string): Effect.Effect<void, WorkdirRecoveryRequired> =>
      Effect.gen(function* () {
        const state = yield* leases.readGuard(slot)
        if (state._tag === "none") return
        const blocked = new WorkdirRecoveryRequired({ workdir: alias })
        if (state._tag === "invalid") return yield* blocked
        const guarded = yield* store.getTask(state.guard.task_id)
        const adapter = registry.get(state.guard.runtime)
        if (Option.isNone(guarded) || adapter === undefined) return yield* blocked
        const result = yield* adapter.reconcile(recordedTurn(guarded.value))
        if (result.providerActive !== false) return yield* blocked
        yield* terminate(
          guarded.value.task_id,
          "interrupted",
          { error_code: "AGENT_PROVIDER_INACTIVE", error_message: "the provider run is no longer active" },
          { type: "task.interrupted", payload: { error_code: "AGENT_PROVIDER_INACTIVE" } }
        )
        yield* leases.removeGuard(slot)
      })

    /** Tasks a recovery guard points at: kept whatever their age or the budget. */
    const guardedTaskIds = Effect.map(leases.validGuards(), (guards) =>
      guards.map(({ guard }) => guard.task_id)
    )

    /**
     * Keep the state within its disk budget with room for `newTasks` more active tasks: usage,
     * plus what the active tasks may still write up to their shares, plus a share per new task.
     * Finished tasks are evicted oldest first while that is over the budget. Returns whether it
     * now fits. One aggregate query when it already fits.
     */
    const enforceBudget = (newTasks: number): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        const usage = yield* store.storageUsage()
        // Never more shares than the task cap allows: a submit over the cap is refused by the
        // insert (AGENT_TASK_LIMIT_REACHED) and must not evict anything first.
        const shares = Math.min(usage.activeTasks + newTasks, settings.maxActiveTasks)
        const reserve = Math.max(0, shares * taskShare - usage.activeBytes)
        if (usage.totalBytes + reserve <= settings.stateMaxBytes) return true
        const outcome = yield* store.evictForBudget({
          budgetBytes: settings.stateMaxBytes,
          reserveBytes: reserve,
          protectedTaskIds: yield* guardedTaskIds
        })
        if (outcome.evicted.length > 0)
          yield* audit.emit("INFO", "tasks_evicted", {
            reason: "state_budget",
            count: outcome.evicted.length,
            usage_bytes: outcome.usageBytes
          })
        return outcome.usageBytes + reserve <= settings.stateMaxBytes
      })

    const collectGarbage: Effect.Effect<void> = Effect.gen(function* () {
      // Most calls find nothing old enough: one indexed read, and the guards are not even read.
      const now = yield* Clock.currentTimeMillis
      const cutoff = new Date(now - settings.retentionSeconds * 1000).toISOString()
      if ((yield* store.listTerminalTaskIdsOlderThan(cutoff)).length > 0)
        yield* store.gc({
          retentionSeconds: settings.retentionSeconds,
          protectedTaskIds: yield* guardedTaskIds
        })
      yield* enforceBudget(0)
    }).pipe(Effect.catchAllCause(() => Effect.void))

    const submit = (
      params: SubmitParams
    ): Effect.Effect<SubmitResult, AgentError | WorkdirNotFound | WorkdirBusy | WorkdirRecoveryRequired> =>
      Effect.gen(function* () {
        const correlationId = yield* checkCorrelationId(params.correlation_id ?? null)
        const idempotencyKey = yield* checkIdempotencyKey(params.idempotency_key ?? null)
        const model = yield* checkModel(params.model ?? null)
        const continueFrom = params.continue_from_task_id ?? null
        yield* collectGarbage
        if (utf8Length(params.prompt) > settings.maxPromptBytes) {
          return yield* new AgentPromptTooLarge({
            message: `the prompt exceeds ${settings.maxPromptBytes} bytes`
          })
        }
        if (params.profile !== "review" && params.profile !== "workspace-write") {
          return yield* new AgentProfileNotAllowed({
            message: "the profile must be review or workspace-write"
          })
        }
        const profile = params.profile
        const fingerprint = requestFingerprint({
          runtime: params.runtime,
          workdir: params.workdir,
          path: params.path,
          profile,
          prompt: params.prompt,
          model,
          continueFrom
        })
        // Idempotency before authorization: a resubmission returns the original task as it is now.
        if (idempotencyKey !== null) {
          const existing = yield* store.findByIdempotencyKey(idempotencyKey)
          if (Option.isSome(existing)) return yield* replay(existing.value, fingerprint)
        }
        const { workdir, relativeCwd } = yield* authorize(params, profile)

        let resume: { readonly sessionId: string } | null = null
        if (continueFrom !== null) {
          const prior = yield* store.getTask(continueFrom)
          if (Option.isNone(prior))
            return yield* new AgentTaskNotFound({ message: "the task to continue does not exist" })
          const p = prior.value
          const notResumable = (why: string) => new AgentSessionNotResumable({ message: why })
          if (p.runtime !== params.runtime)
            return yield* notResumable("the task to continue ran on another runtime")
          if (p.workdir_alias !== workdir.alias)
            return yield* notResumable("the task to continue ran in another workdir")
          if (!isTerminal(p.status)) return yield* notResumable("the task to continue has not finished")
          if (p.profile === "review" && profile === "workspace-write") {
            return yield* new AgentProfileNotAllowed({
              message: "a review task cannot be continued as workspace-write"
            })
          }
          if (p.native_session_id === null)
            return yield* notResumable("the task to continue has no provider session")
          resume = { sessionId: p.native_session_id }
        }

        const adapter = registry.get(params.runtime)
        if (adapter === undefined) {
          return yield* new AgentRuntimeUnavailable({
            message: `runtime '${params.runtime}' is not configured in the bridge`
          })
        }
        const runtime: RuntimeInfo = yield* adapter
          .probe()
          .pipe(
            Effect.catchAllCause(() => Effect.succeed<RuntimeInfo>({ name: adapter.name, available: false }))
          )

        const now = yield* Clock.currentTimeMillis
        const deadlineAt = isoAfter(now, settings.taskTimeoutSeconds)
        const manifest = buildManifest({
          runtime,
          inFlightRecovery: adapter.inFlightRecovery,
          workdir,
          relativeCwd,
          profile,
          model,
          continueFrom,
          correlationId,
          idempotencyKey,
          deadlineAt,
          settings
        })
        const taskId = yield* makeTaskId

        return yield* submitLock.withPermits(1)(
          Effect.gen(function* () {
            // Under the submit lock: the room counted here is not given to a concurrent submit.
            if (!(yield* enforceBudget(1))) {
              return yield* new AgentStorageLimitReached({
                message:
                  "the Agent Bridge's state is at its disk budget and no finished task can be evicted; wait for active tasks to finish"
              })
            }
            const liveTask = newLiveTask(taskId)
            if (profile === "workspace-write") {
              // The flock first (a live writer anywhere means WORKDIR_BUSY, as on the MCP side);
              // only its holder may then reconcile a guard left by a run it does not own.
              yield* leases.acquire(workdir.slot, workdir.alias)
              liveTask.leaseSlot = workdir.slot
              yield* reconcileGuard(workdir.slot, workdir.alias).pipe(
                Effect.tapError(() => leases.release(workdir.slot))
              )
            }
            const attempt = yield* store
              .insertTask(
                {
                  task_id: taskId,
                  runtime: params.runtime,
                  workdir_alias: workdir.alias,
                  workdir_slot: workdir.slot,
                  relative_cwd: relativeCwd,
                  profile,
                  deadline_at: deadlineAt,
                  continue_from_task_id: continueFrom,
                  correlation_id: correlationId,
                  idempotency_key: idempotencyKey,
                  request_fingerprint: fingerprint,
                  requested_model: model,
                  manifest
                },
                { maxActiveTasks: settings.maxActiveTasks }
              )
              .pipe(Effect.either)
            if (Either.isLeft(attempt)) {
              if (liveTask.leaseSlot !== undefined) yield* leases.release(workdir.slot)
              // A concurrent submission with the same key won the insert: replay it.
              if (attempt.left._tag === "AGENT_IDEMPOTENCY_CONFLICT" && idempotencyKey !== null) {
                const existing = yield* store.findByIdempotencyKey(idempotencyKey)
                if (Option.isSome(existing)) return yield* replay(existing.value, fingerprint)
              }
              return yield* attempt.left
            }
            const inserted = attempt.right
            if (profile === "workspace-write") {
              const published = yield* leases
                .publishGuard(guardFor(inserted, inserted.created_at))
                .pipe(Effect.either)
              if (Either.isLeft(published)) {
                yield* leases.release(workdir.slot)
                // A queued task cannot fail (the transition table): it is interrupted, never run.
                yield* terminate(
                  taskId,
                  "interrupted",
                  {
                    error_code: "BRIDGE_SCHEDULING_FAILED",
                    error_message: "the recovery guard could not be published"
                  },
                  { type: "task.interrupted", payload: { error_code: "BRIDGE_SCHEDULING_FAILED" } }
                )
                return yield* published.left
              }
            }
            live.set(taskId, liveTask)
            liveTask.fiber = yield* FiberSet.run(
              fibers,
              drive(inserted, params.prompt, adapter, workdir, liveTask, resume)
            )
            liveTask.deadline = yield* FiberSet.run(fibers, watchDeadline(inserted))
            yield* audit.emit("INFO", "task_submitted", {
              task_id: taskId,
              runtime: params.runtime,
              workdir: workdir.alias,
              profile,
              correlation_id: correlationId ?? undefined
            })
            return {
              task_id: taskId,
              status: "queued" as TaskStatus,
              correlation_id: correlationId,
              idempotency_key: idempotencyKey
            }
          })
        )
      })

    const replay = (existing: TaskRecord, fingerprint: string) =>
      existing.request_fingerprint === fingerprint
        ? Effect.succeed<SubmitResult>({
            task_id: existing.task_id,
            status: existing.status,
            correlation_id: existing.correlation_id,
            idempotency_key: existing.idempotency_key
          })
        : Effect.fail(
            new AgentIdempotencyConflict({ message: "the idempotency_key was used for a different request" })
          )

    // ---- reads --------------------------------------------------------------------------------
    const requireTask = (taskId: string): Effect.Effect<TaskRecord, AgentTaskNotFound> =>
      Effect.flatMap(store.getTask(taskId), (task) =>
        Option.isSome(task)
          ? Effect.succeed(task.value)
          : Effect.fail(new AgentTaskNotFound({ message: "no such task" }))
      )

    const get = (taskId: string): Effect.Effect<TaskView, AgentTaskNotFound> =>
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        const pending =
          task.pending_request_id === null
            ? Option.none()
            : yield* store.getPendingRequest(task.pending_request_id)
        return taskView(task, Option.getOrUndefined(pending))
      })

    const events = (
      taskId: string,
      after: number | undefined,
      limit: number | undefined
    ): Effect.Effect<EventsResult, AgentTaskNotFound | InvalidLimit> =>
      Effect.gen(function* () {
        const cursor = after ?? 0
        const size = limit ?? DEFAULT_EVENTS_LIMIT
        if (cursor < 0 || size < 1 || size > MAX_EVENTS_PAGE) {
          return yield* new InvalidLimit({
            message: `after_event_id must be ≥ 0 and limit within 1..${MAX_EVENTS_PAGE}`
          })
        }
        const task = yield* requireTask(taskId)
        const page = yield* store.readEvents(taskId, cursor, size)
        const last = page[page.length - 1]
        return {
          correlation_id: task.correlation_id,
          events: [...page],
          next_after_event_id: last === undefined ? cursor : last.event_id
        }
      })

    const readResult = (
      taskId: string,
      offset: number | undefined,
      max: number | undefined
    ): Effect.Effect<ResultReadResult, AgentError> =>
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        if (task.result_storage !== "spool") {
          return yield* new AgentResultNotRetrievable({
            message: "the task has no spooled result; read final_response instead"
          })
        }
        const chunk = yield* spool.readResult(taskId, offset ?? 0, max ?? MAX_RESULT_CHUNK_BYTES)
        return { ...chunk, correlation_id: task.correlation_id }
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

    const resolveWaiter = (taskId: string, requestId: string, resolution: Resolution) =>
      Effect.suspend(() => {
        const waiter = live.get(taskId)?.waiters.get(requestId)
        return waiter === undefined ? Effect.void : Deferred.succeed(waiter, resolution).pipe(Effect.asVoid)
      })

    const respondApproval = (
      taskId: string,
      requestId: string,
      decisionText: string,
      granted: ReadonlyArray<string>
    ): Effect.Effect<ResolvedResult, AgentError> =>
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        const request = yield* pendingFor(task, requestId)
        if (request.kind !== "approval")
          return yield* new InvalidApprovalDecision({ message: "the request is not an approval" })
        if (!Schema.is(Decision)(decisionText)) {
          return yield* new InvalidApprovalDecision({
            message: "decision must be approve_once, approve_session, deny or cancel_task"
          })
        }
        const payload = JSON.parse(request.payload_json) as ApprovalPayload
        const verdict = checkDecision(payload, decisionText, granted)
        if (verdict._tag === "invalid-decision")
          return yield* new InvalidApprovalDecision({ message: verdict.problem })
        if (verdict._tag === "outside-policy")
          return yield* new PermissionOutsidePolicy({ message: verdict.problem })
        const resolution: ApprovalResolution = {
          decision: decisionText,
          granted_permission_ids: [...granted]
        }
        yield* store.resolveRequest(taskId, requestId, resolution, {
          maxInteractionBytes: MAX_INTERACTION_BYTES
        })
        yield* tryEvent(taskId, "approval.resolved", { decision: decisionText })
        yield* resolveWaiter(taskId, requestId, resolution)
        // cancel_task also cancels the task, before this call returns.
        if (decisionText === "cancel_task") yield* cancel(taskId)
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
        const task = yield* requireTask(taskId)
        const request = yield* pendingFor(task, requestId)
        if (request.kind !== "question")
          return yield* new InvalidQuestionAnswer({ message: "the request is not a question" })
        const problem = checkAnswers(JSON.parse(request.payload_json) as QuestionPayload, answers)
        if (problem !== undefined) return yield* new InvalidQuestionAnswer({ message: problem })
        const resolution: QuestionResolution = {
          answers: answers.map((a) => ({
            question_id: a.question_id,
            selected_option_ids: [...a.selected_option_ids],
            ...(a.text === undefined ? {} : { text: a.text })
          }))
        }
        yield* store.resolveRequest(taskId, requestId, resolution, {
          maxInteractionBytes: MAX_INTERACTION_BYTES
        })
        yield* tryEvent(taskId, "question.answered", { question_count: answers.length })
        yield* resolveWaiter(taskId, requestId, resolution)
        return {
          task_id: taskId,
          request_id: requestId,
          resolved: true as const,
          correlation_id: task.correlation_id
        }
      })

    const sendMessage = (taskId: string, message: string): Effect.Effect<MessageResult, AgentError> =>
      Effect.gen(function* () {
        const messageBytes = utf8Length(message)
        if (messageBytes > MAX_MESSAGE_BYTES) {
          return yield* new AgentMessageTooLarge({
            message: `the message exceeds ${MAX_MESSAGE_BYTES} bytes`
          })
        }
        const task = yield* requireTask(taskId)
        if (isTerminal(task.status)) {
          return yield* new AgentTaskTerminal({
            message: "the task has finished; submit a new task with continue_from_task_id to follow up"
          })
        }
        const adapter = registry.get(task.runtime)
        if (
          task.status === "queued" ||
          task.status === "starting" ||
          adapter === undefined ||
          !live.has(taskId)
        ) {
          return yield* new AgentTaskNotActive({ message: "the task has no active turn to steer" })
        }
        yield* adapter.steer(taskId, message)
        yield* tryEvent(taskId, "user.message", { bytes: messageBytes })
        return { task_id: taskId, accepted: true as const, correlation_id: task.correlation_id }
      })

    /**
     * Terminal-first cancel (bridge-internals §6): the task is cancelled before this returns;
     * the provider is then asked to stop (bounded) and the turn's fiber interrupted. Repeating
     * it changes nothing.
     */
    const cancel = (taskId: string): Effect.Effect<CancelResult, AgentTaskNotFound> =>
      Effect.gen(function* () {
        const task = yield* requireTask(taskId)
        if (isTerminal(task.status)) {
          return { task_id: taskId, status: task.status, correlation_id: task.correlation_id }
        }
        const liveTask = live.get(taskId)
        if (liveTask !== undefined) liveTask.stopReason = "cancelled"
        const changed = yield* terminate(taskId, "cancelled", {}, { type: "task.cancelled", payload: {} })
        if (!changed) {
          const now = yield* requireTask(taskId)
          return { task_id: taskId, status: now.status, correlation_id: now.correlation_id }
        }
        if (liveTask !== undefined) {
          for (const requestId of liveTask.waiters.keys()) yield* failWaiter(taskId, requestId, "cancelled")
          const adapter = registry.get(task.runtime)
          const fiber = liveTask.fiber
          yield* FiberSet.run(
            fibers,
            Effect.zipRight(
              cancelProvider(adapter, taskId),
              fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
            )
          )
        }
        return { task_id: taskId, status: "cancelled" as TaskStatus, correlation_id: task.correlation_id }
      })

    const runtimes = () => Effect.map(registry.list(), (list) => ({ runtimes: [...list] }))

    // ---- deadlines ----------------------------------------------------------------------------
    /** Each live task's deadline: interrupted with AGENT_TASK_TIMED_OUT, the provider told to stop. */
    const watchDeadline = (task: TaskRecord) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* Effect.sleep(Math.max(0, Date.parse(task.deadline_at) - now))
        const liveTask = live.get(task.task_id)
        if (liveTask === undefined) return
        liveTask.stopReason = "timed-out"
        const changed = yield* terminate(
          task.task_id,
          "interrupted",
          { error_code: "AGENT_TASK_TIMED_OUT", error_message: "the task passed its deadline" },
          { type: "task.interrupted", payload: { error_code: "AGENT_TASK_TIMED_OUT" } }
        )
        if (!changed) return
        for (const requestId of liveTask.waiters.keys()) yield* failWaiter(task.task_id, requestId, "expired")
        yield* cancelProvider(registry.get(task.runtime), task.task_id)
        if (liveTask.fiber !== undefined) yield* Fiber.interrupt(liveTask.fiber)
      })

    // ---- restart reconciliation (bridge-internals §10) --------------------------------------
    /**
     * At startup, every non-terminal task was left by a previous process. It is interrupted —
     * never re-run, never answered — with BRIDGE_RESTARTED (AGENT_TASK_TIMED_OUT past its
     * deadline). No adapter here can re-attach a live turn yet, so REATTACHED is never acted on.
     * A task's recovery guard is removed only when its adapter proves the old run stopped;
     * guards of tasks already terminal (a crash between the two) are reconciled the same way.
     */
    const reconcileAtStartup: Effect.Effect<void> = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      for (const task of yield* store.listNonTerminal()) {
        yield* tryEvent(task.task_id, "runtime.reconcile_started", { runtime: task.runtime })
        const adapter = registry.get(task.runtime)
        const result =
          adapter === undefined
            ? { status: "UNKNOWN", providerActive: null, detail: "the runtime is not configured" }
            : yield* adapter.reconcile(recordedTurn(task))
        yield* tryEvent(task.task_id, "runtime.reconcile_finished", {
          runtime: task.runtime,
          status: result.status,
          provider_active: result.providerActive
        })
        const code = now > Date.parse(task.deadline_at) ? "AGENT_TASK_TIMED_OUT" : "BRIDGE_RESTARTED"
        yield* terminate(
          task.task_id,
          "interrupted",
          { error_code: code, error_message: "the bridge restarted during the task; it was not re-run" },
          { type: "task.interrupted", payload: { error_code: code } }
        )
        yield* tryEvent(task.task_id, "task.reconciled", {
          status: result.status,
          provider_active: result.providerActive,
          error_code: code
        })
        yield* audit.emit("INFO", "task_reconciled", {
          task_id: task.task_id,
          status: result.status,
          provider_active: result.providerActive,
          error_code: code
        })
        if (result.providerActive === false && task.profile === "workspace-write") {
          yield* clearGuardOf(task.workdir_slot, task.task_id)
        }
      }
      for (const { slot, guard } of yield* leases.validGuards()) {
        const task = yield* store.getTask(guard.task_id)
        const adapter = registry.get(guard.runtime)
        if (Option.isNone(task) || !isTerminal(task.value.status) || adapter === undefined) continue
        const result = yield* adapter.reconcile(recordedTurn(task.value))
        if (result.providerActive === false) yield* leases.removeGuard(slot)
      }
      // After reconciliation: the dead process's tasks are finished now, and counting them as
      // active (at their full share) would evict finished tasks for room nobody will use.
      yield* collectGarbage
    })

    // Graceful shutdown (runs before the fiber set is torn down): every live task is interrupted
    // honestly with BRIDGE_SHUTDOWN — terminal first, so a pending interaction is staled as part
    // of that move rather than withdrawn — then its provider is asked to stop and its lease
    // released by the turn's cleanup.
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        [...live.values()],
        (liveTask) =>
          Effect.gen(function* () {
            liveTask.stopReason = "shutdown"
            yield* terminate(
              liveTask.taskId,
              "interrupted",
              { error_code: "BRIDGE_SHUTDOWN", error_message: "the bridge stopped during the task" },
              { type: "task.interrupted", payload: { error_code: "BRIDGE_SHUTDOWN" } }
            )
            const task = yield* store.getTask(liveTask.taskId)
            if (Option.isSome(task)) yield* cancelProvider(registry.get(task.value.runtime), liveTask.taskId)
            if (liveTask.fiber !== undefined) yield* Fiber.interrupt(liveTask.fiber)
          }),
        { concurrency: "unbounded", discard: true }
      )
    )

    return {
      submit,
      get,
      events,
      readResult,
      respondApproval,
      answerQuestion,
      sendMessage,
      cancel,
      runtimes,
      collectGarbage,
      reconcileAtStartup
    } as const
  })
}) {}
