/**
 * Test-only provider adapters, registered through the in-process bridge's runtime registry (a
 * leaf of the production graph): one that fails its turn with a chosen message, under any
 * runtime name, and one whose steps block on gates the test opens — to stop a task exactly at
 * an await point. Both prove their runs stopped on reconcile.
 */
import type { ProviderAdapter, ReconcileResult, TurnSink } from "@serverfs/adapters"
import { AgentProviderError, type RuntimeName } from "@serverfs/domain"
import { Deferred, Effect } from "effect"

const stopped = (): Effect.Effect<ReconcileResult> =>
  Effect.succeed({ status: "NOT_RECOVERABLE", providerActive: false, detail: "stub: nothing runs" })

/** A runtime whose every turn fails with AGENT_PROVIDER_ERROR and `message(workdirRoot)`. */
export const failingAdapter = (
  name: RuntimeName,
  message: (workdirRoot: string) => string
): ProviderAdapter => ({
  name,
  inFlightRecovery: "none",
  probe: () => Effect.succeed({ name, available: true, version: "stub-1" }),
  run: (request) => Effect.fail(new AgentProviderError({ message: message(request.workdirRoot) })),
  steer: () => Effect.void,
  cancel: () => Effect.void,
  reconcile: stopped,
  close: () => Effect.void
})

/** The points where a gated submission or turn waits for the test. */
export type GatePoint = "probe" | "read-guard" | "publish-guard" | "run" | "native-ids" | "done"
const POINTS: ReadonlyArray<GatePoint> = ["probe", "read-guard", "publish-guard", "run", "native-ids", "done"]

export interface Gates {
  /** Resolved when the submission or turn reaches `point`. */
  readonly reached: (point: GatePoint) => Effect.Effect<void>
  /** Lets it go on past `point`. */
  readonly open: (point: GatePoint) => Effect.Effect<void>
  /** Wait at `point` (a no-op past an open gate). */
  readonly wait: (point: GatePoint) => Effect.Effect<void>
}

/** Gates closed at `blocked`, open elsewhere. */
export const makeGates = (blocked: ReadonlyArray<GatePoint>): Effect.Effect<Gates> =>
  Effect.gen(function* () {
    const reached = new Map<GatePoint, Deferred.Deferred<void>>()
    const release = new Map<GatePoint, Deferred.Deferred<void>>()
    for (const p of POINTS) {
      reached.set(p, yield* Deferred.make<void>())
      const gate = yield* Deferred.make<void>()
      if (!blocked.includes(p)) yield* Deferred.succeed(gate, undefined)
      release.set(p, gate)
    }
    const get = (map: Map<GatePoint, Deferred.Deferred<void>>, p: GatePoint) =>
      Effect.fromNullable(map.get(p)).pipe(Effect.orDie)
    return {
      reached: (p) => Effect.flatMap(get(reached, p), Deferred.await),
      open: (p) => Effect.flatMap(get(release, p), (d) => Deferred.succeed(d, undefined)),
      wait: (p) =>
        Effect.zipRight(
          Effect.flatMap(get(reached, p), (d) => Deferred.succeed(d, undefined)),
          Effect.flatMap(get(release, p), Deferred.await)
        )
    }
  })

/** A "fake" runtime whose probe and turn wait at the gates: run start, native ids, the end. */
export const gatedAdapter = (gates: Gates): ProviderAdapter => ({
  name: "fake",
  inFlightRecovery: "none",
  probe: () => Effect.as(gates.wait("probe"), { name: "fake", available: true, version: "gated-1" }),
  run: (request, sink: TurnSink) =>
    Effect.gen(function* () {
      yield* gates.wait("run")
      yield* sink.nativeIds({ sessionId: `gated-${request.taskId}` })
      yield* gates.wait("native-ids")
      yield* gates.wait("done")
      return { finalText: "done" }
    }),
  steer: () => Effect.void,
  cancel: () => Effect.void,
  reconcile: stopped,
  close: () => Effect.void
})

/** An approval the turn waits on (the human never answers here). */
export const approvalAdapter = (): ProviderAdapter => ({
  ...gatedAdapter({ reached: () => Effect.void, open: () => Effect.void, wait: () => Effect.void }),
  run: (_request, sink) =>
    sink
      .requestApproval({ category: "other", title: "Go on?", available_decisions: ["approve_once", "deny"] })
      .pipe(
        Effect.map((answer) => ({ finalText: answer.decision })),
        // The interaction ended without an answer (stale, expired, cancelled): the turn just ends.
        Effect.catchTag("InteractionEnded", () => Effect.succeed({ finalText: "ended" }))
      )
})
