import * as path from "node:path"
import { type ProviderAdapter, TurnFileRefused, type TurnFiles, type TurnSink } from "@serverfs/adapters/port"
import {
  ApprovalPayload,
  ApprovalResolution,
  BridgeShutdown,
  HostPathRedaction,
  QuestionPayload,
  QuestionResolution,
  renderError
} from "@serverfs/domain"
import { Configuration, type Workdir } from "@serverfs/policy"
import { type TaskRecord, TaskStore } from "@serverfs/store"
import { leaseHolderMutations } from "@serverfs/workspace"
import { Effect, Exit, Schema, Scope } from "effect"
import { TaskObservations } from "../diagnostics/TaskObservations.js"
import { BridgeLeases } from "../leases/BridgeLeases.js"
import { InteractionBroker } from "./InteractionBroker.js"
import { type LiveTask, LiveTaskRegistry } from "./LiveTasks.js"
import { RecoveryGuards } from "./RecoveryGuards.js"
import { ResultPublisher } from "./ResultPublisher.js"
import { TaskEvents } from "./TaskEvents.js"
import { Terminations } from "./Terminations.js"

/**
 * Let pending I/O and other fibers run, at most every few milliseconds. A provider streaming
 * events without pause would otherwise keep the event loop from polling sockets and keep the
 * store's single connection (a semaphore its releaser re-takes at once): every RPC — task.get,
 * cancel, answers — would wait until the stream stops. setImmediate runs right after the poll
 * phase, without a timer's delay. The slice is wall-clock scheduling, not domain time; its
 * state belongs to this service instance.
 */
const FAIRNESS_SLICE_MS = 5
const makeFairness = () => {
  let lastTurn = 0
  return Effect.suspend(() => {
    const now = performance.now()
    if (now - lastTurn < FAIRNESS_SLICE_MS) return Effect.void
    lastTurn = now
    return Effect.async<void>((resume) => {
      const handle = setImmediate(() => resume(Effect.void))
      return Effect.sync(() => clearImmediate(handle))
    })
  })
}

/** Decoding keeps what the schema does not name: the stored payload is what the provider sent, redacted. */
const keep = { onExcessProperty: "preserve" } as const

/** A turn to drive: the inserted task, its prompt, its adapter and where it runs. */
export interface Turn {
  readonly task: TaskRecord
  readonly prompt: string
  readonly adapter: ProviderAdapter
  readonly workdir: Workdir
  readonly liveTask: LiveTask
  readonly resume: { readonly sessionId: string } | null
}

/**
 * One fiber per task drives its turn through its adapter (bridge-internals §6/§8): starting,
 * running, the provider's events (redacted) and interactions, then the result or the failure.
 * The fiber lives in the registry's FiberMap; when it ends — however it ends — the task's scope
 * is closed, which releases everything acquired for the task (deadline, guard, lease).
 */
export class TurnRunner extends Effect.Service<TurnRunner>()("@serverfs/bridge/TurnRunner", {
  effect: Effect.gen(function* () {
    const store = yield* TaskStore
    const events = yield* TaskEvents
    const live = yield* LiveTaskRegistry
    const terminations = yield* Terminations
    const guards = yield* RecoveryGuards
    const broker = yield* InteractionBroker
    const results = yield* ResultPublisher
    const leases = yield* BridgeLeases
    const observations = yield* TaskObservations
    const { workdirs } = yield* Configuration
    const allRoots = workdirs.map((w) => w.hostPath)
    const fairness = makeFairness()
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

    /** `interact`: how an interaction reaches the human (a restart's re-attach re-binds a replay). */
    const sinkFor = (
      task: TaskRecord,
      liveTask: LiveTask,
      redaction: HostPathRedaction,
      interact: InteractionBroker["interact"] = broker.interact
    ): TurnSink => ({
      // Not awaited: the provider's stream goes on while the writer commits (see EventWriter).
      event: (eventType, payload) =>
        Effect.zipLeft(events.enqueue(task.task_id, eventType, redaction.record(payload)), fairness),
      nativeIds: (ids) =>
        store.setNativeIds(task.task_id, ids).pipe(Effect.flatMap(guards.updateGuard), Effect.ignore),
      // The redacted payload is decoded back: redaction keeps the shape, so a failure is a defect.
      requestApproval: (payload) =>
        Effect.flatMap(
          Effect.orDie(Schema.decodeUnknown(ApprovalPayload)(redaction.value(payload), keep)),
          (redacted) =>
            Effect.flatMap(interact(task, liveTask, "approval", redacted), (resolution) =>
              Schema.is(ApprovalResolution)(resolution)
                ? Effect.succeed(resolution)
                : Effect.dieMessage("an approval was resolved with a question's answers")
            )
        ),
      requestQuestion: (payload) =>
        Effect.flatMap(
          Effect.orDie(Schema.decodeUnknown(QuestionPayload)(redaction.value(payload), keep)),
          (redacted) =>
            Effect.flatMap(interact(task, liveTask, "question", redacted), (resolution) =>
              Schema.is(QuestionResolution)(resolution)
                ? Effect.succeed(resolution)
                : Effect.dieMessage("a question was answered with an approval decision")
            )
        )
    })

    /**
     * The turn's first step waits for the event loop's next check phase. A forked fiber runs as
     * soon as the forking one yields, and a turn's first stretch is synchronous SQLite work
     * (queued → starting → running, task.started; a scripted task runs to its end): started
     * inline it ran before task.submit's answer was written, adding ~0.5 ms to every submit and
     * a whole scripted task to some (docs/performance.md, "Bridge submit and memory").
     */
    const afterThisTurnOfTheLoop = Effect.async<void>((resume) => {
      const pending = setImmediate(() => resume(Effect.void))
      return Effect.sync(() => clearImmediate(pending))
    })

    const drive = ({ task, prompt, adapter, workdir, liveTask, resume }: Turn): Effect.Effect<void> =>
      Effect.gen(function* () {
        const redaction = new HostPathRedaction(workdir.hostPath, allRoots)
        // bridge-internals §8: starting, task.started, running. The event goes in the start's own
        // transaction: no reader sees one without the other, and a task pays one commit less.
        const started = { type: "task.started", payload: { runtime: task.runtime } }
        if (!(yield* terminations.advance(task.task_id, "starting", started))) return // cancelled while queued
        // Spec v0.22 §9.2: the queue wait ends at the committed start; the runtime start is the
        // bridge-owned dispatch up to `running`; then the provider's first execution stretch.
        yield* observations.started(task.task_id)
        if (!(yield* terminations.advance(task.task_id, "running"))) return
        yield* observations.running(task.task_id)
        liveTask.providerStopped = false
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
            sinkFor(task, liveTask, redaction)
          )
          .pipe(Effect.either)
        liveTask.providerStopped = true
        // Finalization: from the provider's return (or failure) to the terminal transition.
        yield* observations.providerReturned(task.task_id, outcome._tag === "Right")
        if (outcome._tag === "Right") yield* results.publish(task.task_id, outcome.right.finalText, redaction)
        // The provider's message is redacted by `terminate`, whichever adapter produced it.
        else yield* terminations.terminate(task.task_id, outcome.left)
      })

    /**
     * Fork the turn into the FiberMap. Called uninterruptibly by the submitter once the task's
     * scope holds everything: from here the turn fiber owns the scope and closes it on exit. A
     * turn interrupted by anything but a terminal move is the bridge stopping: BRIDGE_SHUTDOWN
     * (a no-op when cancel, a deadline or an expiry already ended it).
     */
    const start = (turn: Turn) =>
      launch(turn.task, turn.liveTask, Effect.zipRight(afterThisTurnOfTheLoop, drive(turn)))

    /** `start` with another body (a restart's re-attach, Reattachment.ts). */
    const launch = (task: TaskRecord, liveTask: LiveTask, body: Effect.Effect<void>) =>
      live.add(liveTask).pipe(
        // Runs first when the scope closes: the task is no longer live (no steering, no stop).
        Effect.zipRight(Scope.addFinalizer(liveTask.scope, live.remove(task.task_id))),
        Effect.zipRight(
          live.run(
            task.task_id,
            Effect.interruptible(body).pipe(
              Effect.onExit((exit) =>
                Effect.zipRight(
                  Exit.isInterrupted(exit)
                    ? terminations.terminate(
                        task.task_id,
                        new BridgeShutdown({ message: "the bridge stopped during the task" })
                      )
                    : Effect.void,
                  Scope.close(liveTask.scope, exit)
                )
              )
            )
          )
        )
      )

    return { start, launch, sinkFor } as const
  })
}) {}
