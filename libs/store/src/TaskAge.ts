import { Effect } from "effect"
import { isoEffect, type StoreContext } from "./StoreContext.js"
import type { Instant } from "./TaskStoreShape.js"

/**
 * Whether the store holds tasks older than a moment (spec v0.22 §8.1/§8.2): the diagnostics
 * recorder is memory-only, so a task created before the bridge's current diagnostic generation
 * has history the recorder cannot know. One bounded existence probe; nothing about the tasks is
 * returned.
 */
export const makeTaskAge = (ctx: StoreContext) => {
  const { sql } = ctx

  const hasTaskCreatedBefore = (moment: Instant): Effect.Effect<boolean> =>
    Effect.flatMap(isoEffect(moment), (before) =>
      Effect.orDie(
        Effect.map(
          sql<{ readonly found: number }>`
            SELECT EXISTS (SELECT 1 FROM tasks WHERE created_at < ${before}) AS found`,
          (rows) => rows[0]?.found === 1
        )
      )
    )

  return { hasTaskCreatedBefore } as const
}
