import {
  type AgentError,
  AgentIdempotencyConflict,
  AgentProfileNotAllowed,
  AgentPromptTooLarge,
  AgentRuntimeUnavailable,
  AgentSessionNotResumable,
  AgentStorageLimitReached,
  AgentTaskNotFound,
  BridgeSchedulingFailed,
  isTerminal,
  type RuntimeInfo,
  type SubmitParams,
  type SubmitResult,
  type WorkdirBusy,
  type WorkdirNotFound,
  type WorkdirRecoveryRequired
} from "@serverfs/domain"
import { authorizeSubmission, type Workdir, WorkdirRegistry } from "@serverfs/policy"
import { makeTaskId, type TaskRecord, TaskStore, utf8Length } from "@serverfs/store"
import { AuditLog } from "@serverfs/telemetry-local"
import { toSubmitPathError, WorkdirRoots, walkStartDirectory } from "@serverfs/workspace"
import { Clock, DateTime, Effect, Either, Exit, Option, Scope } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { TaskObservations } from "../diagnostics/TaskObservations.js"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { RuntimeRegistry } from "../RuntimeRegistry.js"
import { newLiveTask } from "./LiveTasks.js"
import { buildManifest } from "./ManifestBuilder.js"
import { ModelCatalogs } from "./ModelCatalogs.js"
import { RecoveryGuards } from "./RecoveryGuards.js"
import { Retention } from "./Retention.js"
import { checkCorrelationId, checkIdempotencyKey, checkModel, requestFingerprint } from "./SubmitChecks.js"
import { TaskControl } from "./TaskControl.js"
import { Terminations } from "./Terminations.js"
import { TurnRunner } from "./TurnRunner.js"
import { holdWriterLease } from "./WriterLease.js"

type SubmitError = AgentError | WorkdirNotFound | WorkdirBusy | WorkdirRecoveryRequired

/**
 * task.submit (spec v0.3 §10/§11, v0.7 §2, bridge-internals §6): shape checks, idempotency,
 * authorization (the one rule of libs/policy, the start directory walked), continuation, the
 * disk budget, then the task's scope: its writer lease, its recovery guard and its deadline are
 * acquired into it, and the turn fiber that owns it is started. An interruption or a failure at
 * any point before that closes the scope: nothing acquired outlives a submit that did not start.
 */
export class Submission extends Effect.Service<Submission>()("@serverfs/bridge/Submission", {
  effect: Effect.gen(function* () {
    const store = yield* TaskStore
    const registry = yield* RuntimeRegistry
    const leases = yield* BridgeLeases
    const workdirs = yield* WorkdirRegistry
    const roots = yield* WorkdirRoots
    const settings = yield* BridgeSettingsTag
    const audit = yield* AuditLog
    const guards = yield* RecoveryGuards
    const retention = yield* Retention
    const terminations = yield* Terminations
    const control = yield* TaskControl
    const turns = yield* TurnRunner
    const observations = yield* TaskObservations
    const catalogs = yield* ModelCatalogs
    const submitLock = yield* Effect.makeSemaphore(1)

    const authorize = (params: SubmitParams, profile: "review" | "workspace-write") =>
      Effect.gen(function* () {
        const workdir = yield* workdirs.get(params.workdir)
        yield* authorizeSubmission(workdir, { runtime: params.runtime, profile, path: params.path })
        const resolved = yield* walkStartDirectory(roots.rootOf(workdir), workdir, params.path).pipe(
          Effect.mapError(toSubmitPathError)
        )
        return { workdir, relativeCwd: resolved.relative }
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

    /** The task to continue: finished, same runtime and workdir, no profile escalation, a session. */
    const resumeOf = (continueFrom: string, params: SubmitParams, workdir: Workdir, profile: string) =>
      Effect.gen(function* () {
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
        return { sessionId: p.native_session_id }
      })

    const submit = (params: SubmitParams): Effect.Effect<SubmitResult, SubmitError> =>
      Effect.gen(function* () {
        const correlationId = yield* checkCorrelationId(params.correlation_id ?? null)
        const idempotencyKey = yield* checkIdempotencyKey(params.idempotency_key ?? null)
        const model = yield* checkModel(params.model ?? null)
        const continueFrom = params.continue_from_task_id ?? null
        // Only the expired tasks here: the budget is enforced below, under the submit lock, with
        // room for this task (enforcing it here too read the storage totals twice per submit).
        yield* retention.collectExpired
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
        // Spec v0.22 §9.1: only a genuinely new submission stages diagnostics; a replay above
        // touches no slot. Dropped with this fiber if no task is created.
        const staging = yield* observations.stage
        const { workdir, relativeCwd } = yield* authorize(params, profile)
        const resume = continueFrom === null ? null : yield* resumeOf(continueFrom, params, workdir, profile)

        const adapter = registry.get(params.runtime)
        if (adapter === undefined) {
          return yield* new AgentRuntimeUnavailable({
            message: `runtime '${params.runtime}' is not configured in the bridge`
          })
        }
        const runtime: RuntimeInfo = yield* adapter.probe().pipe(
          // A probe has no typed failure: a defect is logged as one, and the manifest records
          // the runtime as unavailable rather than failing the submission.
          Effect.catchAllDefect((defect) =>
            Effect.as(Effect.logError("runtime probe failed", defect), {
              name: adapter.name,
              available: false
            } satisfies RuntimeInfo)
          )
        )
        // A requested model must be one the runtime lists, where it lists any (v0.9).
        if (model !== null) yield* catalogs.checkRequested(adapter, runtime, model)

        const now = yield* Clock.currentTimeMillis
        const deadlineAt = DateTime.formatIso(DateTime.unsafeMake(now + settings.taskTimeoutSeconds * 1000))
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

        // Under the submit lock: the room counted here is not given to a concurrent submit.
        return yield* submitLock.withPermits(1)(
          Effect.gen(function* () {
            if (!(yield* retention.enforceBudget(1))) {
              return yield* new AgentStorageLimitReached({
                message:
                  "the Agent Bridge's state is at its disk budget and no finished task can be evicted; wait for active tasks to finish"
              })
            }
            return yield* Effect.uninterruptibleMask((restore) =>
              Effect.gen(function* () {
                const scope = yield* Scope.make()
                // Runs last when the scope closes: the task's end may free room for the budget.
                yield* Scope.addFinalizer(scope, retention.collectGarbage)
                const liveTask = newLiveTask(taskId, scope)
                let inserted = false
                // Everything the task holds, acquired into its scope. Interruptible: a cancelled
                // submit stops at any await point here, and the scope is closed below.
                const acquire = Effect.gen(function* () {
                  if (profile === "workspace-write") {
                    // The flock first (a live writer anywhere means WORKDIR_BUSY, as on the MCP
                    // side); only its holder may then reconcile a guard left by a run it does not own.
                    // Timed as one acquisition whose exit is classified once (metric + staging).
                    yield* Effect.gen(function* () {
                      yield* holdWriterLease(leases, liveTask, workdir)
                      yield* guards.reconcileForeign(workdir.slot, workdir.alias)
                    }).pipe(observations.leaseAcquisition(staging))
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
                  if (Either.isLeft(attempt)) return attempt
                  inserted = true
                  yield* observations.admitted(staging, attempt.right)
                  if (profile === "workspace-write") {
                    yield* guards
                      .publishScoped(attempt.right, () => liveTask.providerStopped)
                      .pipe(
                        Effect.tapError(() =>
                          terminations.terminate(
                            taskId,
                            // A queued task cannot fail (the transition table): it is interrupted, never run.
                            new BridgeSchedulingFailed({
                              message: "the recovery guard could not be published"
                            })
                          )
                        )
                      )
                  }
                  return attempt
                }).pipe(Scope.extend(scope))
                const acquired = yield* Effect.exit(restore(acquire))
                if (Exit.isFailure(acquired)) {
                  yield* Scope.close(scope, acquired)
                  // Interrupted (or refused) after the insert: the task never runs.
                  if (inserted)
                    yield* terminations.terminate(
                      taskId,
                      new BridgeSchedulingFailed({ message: "the task could not be scheduled" })
                    )
                  return yield* Effect.failCause(acquired.cause)
                }
                if (Either.isLeft(acquired.value)) {
                  yield* Scope.close(scope, Exit.void)
                  const refused = acquired.value.left
                  // A concurrent submission with the same key won the insert: replay it.
                  if (refused._tag === "AGENT_IDEMPOTENCY_CONFLICT" && idempotencyKey !== null) {
                    const existing = yield* store.findByIdempotencyKey(idempotencyKey)
                    if (Option.isSome(existing)) return yield* replay(existing.value, fingerprint)
                  }
                  return yield* refused
                }
                const task = acquired.value.right
                // From here the task's fibers own the scope: the deadline lives in it, the turn
                // closes it when it ends. (Forked interruptible: this region is not.)
                yield* Effect.forkIn(Effect.interruptible(control.watchDeadline(task)), scope)
                yield* turns.start({ task, prompt: params.prompt, adapter, workdir, liveTask, resume })
                yield* audit.emit("INFO", "task_submitted", {
                  task_id: taskId,
                  runtime: params.runtime,
                  workdir: workdir.alias,
                  profile,
                  correlation_id: correlationId ?? undefined
                })
                return {
                  task_id: taskId,
                  status: "queued",
                  correlation_id: correlationId,
                  idempotency_key: idempotencyKey
                } satisfies SubmitResult
              })
            )
          })
        )
      })

    return { submit } as const
  })
}) {}
