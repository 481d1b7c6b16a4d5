import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type ModelInfo, query } from "@anthropic-ai/claude-agent-sdk"
import {
  boundedModel,
  fitsUtf8Bytes,
  MAX_MODEL_NAME_BYTES,
  MAX_MODELS,
  type ModelEntry
} from "@serverfs/domain"
import { Effect } from "effect"
import { ModelDiscoveryFailed, type ModelListing } from "../ProviderAdapter.js"
import { killGroup, spawnInGroup } from "./ClaudeProcess.js"
import { InputQueue } from "./InputQueue.js"

/**
 * Claude Code's model list: the Agent SDK's `supportedModels()` on a query that is never given a
 * prompt. The CLI starts, answers the SDK's initialize (whose answer carries the list) and is
 * stopped; no user message is ever sent, so no inference request is made (the CLI reads its list
 * from itself, offline: claude-agent-sdk-offline.md). Run in a throwaway empty directory with the
 * user's settings only (`settingSources: ["user"]`), so no project's settings or trust state is
 * read or written; the directory and the CLI's process group are gone when the scope closes,
 * whatever ended it (the caller's time bound included).
 *
 * Scope `current_account`: Claude Code builds the list for the signed-in account (an API key and
 * a subscription see different rows) narrowed by the user's `availableModels` setting. The rows
 * are aliases (`opus`) with the model each resolves to: a submit may name either.
 */
export interface ClaudeModelsDeps {
  readonly executable: () => string | undefined
  readonly environment: Record<string, string | undefined>
}

const failed = (reason: string) => new ModelDiscoveryFailed({ reason })

/** The SDK's row → the normalized entry. The `default` row is Claude Code's default choice. */
export const toModelEntry = (m: ModelInfo): ModelEntry =>
  boundedModel({
    id: m.value,
    display_name: m.displayName,
    ...(typeof m.description === "string" ? { description: m.description } : {}),
    enabled: true,
    is_default: m.value === "default",
    hidden: false,
    ...(Array.isArray(m.supportedEffortLevels)
      ? {
          reasoning: {
            supported: m.supportedEffortLevels.filter((l) => typeof l === "string"),
            default: null
          }
        }
      : {})
  })

const isRow = (m: unknown): m is ModelInfo =>
  typeof m === "object" &&
  m !== null &&
  typeof (m as ModelInfo).value === "string" &&
  typeof (m as ModelInfo).displayName === "string" &&
  fitsUtf8Bytes((m as ModelInfo).value, MAX_MODEL_NAME_BYTES)

/** The rows → the listing: at most MAX_MODELS; an empty list is a failure (nothing to offer). */
export const claudeListing = (rows: ReadonlyArray<unknown>): ModelListing | undefined => {
  const kept = rows.slice(0, MAX_MODELS).filter(isRow)
  if (kept.length === 0) return undefined
  const accepted = new Set<string>()
  for (const row of kept) {
    accepted.add(row.value)
    if (typeof row.resolvedModel === "string" && fitsUtf8Bytes(row.resolvedModel, MAX_MODEL_NAME_BYTES)) {
      accepted.add(row.resolvedModel)
    }
  }
  return {
    catalog: {
      status: "ok",
      scope: "current_account",
      source: "claude_agent_sdk",
      models: kept.map(toModelEntry)
    },
    accepted
  }
}

/** A CLI started for the listing, stopped (with its group) and its directory removed on release. */
const startListing = (bin: string, deps: ClaudeModelsDeps) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-models-"))
      const input = new InputQueue()
      const spawned: { child: ChildProcess | undefined } = { child: undefined }
      try {
        const q = query({
          prompt: input,
          options: {
            cwd,
            pathToClaudeCodeExecutable: bin,
            env: deps.environment,
            settingSources: ["user"],
            spawnClaudeCodeProcess: (options) =>
              spawnInGroup(
                options,
                (child) => {
                  spawned.child = child
                },
                () => {}
              )
          }
        })
        return { cwd, input, q, spawned }
      } catch (error) {
        // Nothing was started: only the directory to remove.
        fs.rmSync(cwd, { recursive: true, force: true })
        throw error
      }
    }),
    ({ cwd, input, q, spawned }) =>
      Effect.sync(() => {
        input.end()
        q.close()
        const pid = spawned.child?.pid
        if (pid !== undefined) killGroup(pid, "SIGKILL")
        fs.rmSync(cwd, { recursive: true, force: true })
      })
  )

export const makeClaudeListModels =
  (deps: ClaudeModelsDeps) => (): Effect.Effect<ModelListing, ModelDiscoveryFailed> =>
    Effect.suspend(() => {
      const bin = deps.executable()
      if (bin === undefined) return Effect.fail(failed("the Claude Code CLI was not found"))
      return Effect.scoped(
        Effect.gen(function* () {
          const { q } = yield* startListing(bin, deps).pipe(
            // The SDK refuses bad options by throwing: the provider's failure.
            Effect.catchAllDefect(() => Effect.fail(failed("the Claude Agent SDK refused to start")))
          )
          const rows = yield* Effect.tryPromise({
            try: () => q.supportedModels(),
            catch: () => failed("Claude Code did not answer with its models")
          })
          const listing = claudeListing(Array.isArray(rows) ? rows : [])
          return listing ?? (yield* failed("Claude Code listed no models"))
        })
      )
    })
