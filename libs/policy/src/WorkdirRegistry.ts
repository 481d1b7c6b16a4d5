import { WorkdirNotFound } from "@serverfs/domain"
import { Effect } from "effect"
import { Configuration } from "./Configuration.js"
import type { Workdir } from "./Workdir.js"

/** The enabled workdirs in slot order, looked up by alias (case-sensitive). */
export class WorkdirRegistry extends Effect.Service<WorkdirRegistry>()("@serverfs/policy/WorkdirRegistry", {
  effect: Effect.gen(function* () {
    const { workdirs } = yield* Configuration
    const byAlias = new Map(workdirs.map((w) => [w.alias, w] as const))
    const get = (alias: string): Effect.Effect<Workdir, WorkdirNotFound> => {
      const workdir = byAlias.get(alias)
      return workdir === undefined
        ? Effect.fail(new WorkdirNotFound({ workdir: alias }))
        : Effect.succeed(workdir)
    }
    return { all: workdirs, get } as const
  })
}) {}
