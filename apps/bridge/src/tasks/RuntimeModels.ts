import {
  type AgentError,
  AgentProfileNotAllowed,
  AgentPromptTooLarge,
  InvalidRequest,
  type ModelAdvice,
  type RuntimeModelsParams,
  type RuntimeModelsResult,
  type WorkdirNotFound
} from "@serverfs/domain"
import { authorizeSubmission, WorkdirRegistry } from "@serverfs/policy"
import { utf8Length } from "@serverfs/store"
import { toSubmitPathError, WorkdirRoots, walkStartDirectory } from "@serverfs/workspace"
import { Effect } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { ModelCatalogs } from "./ModelCatalogs.js"

/**
 * runtime.models (bridge-internals §8). With just `runtime` it is discovery: the runtime's
 * catalog (ModelCatalogs). Given a workdir, a task_prompt, a non-empty path or a non-default
 * profile, it is advice mode, which needs both workdir and task_prompt and runs submit's checks
 * first — profile, the one authorization rule of libs/policy with the start directory walked,
 * the prompt's size — and then answers `model_advice`. There is no model advisor here
 * (deviation 41): the advice is `disabled`, or `not_applicable` when there is no list to choose
 * from. No lease is taken and no task is created.
 */
type ModelsError = AgentError | WorkdirNotFound

export class RuntimeModels extends Effect.Service<RuntimeModels>()("@serverfs/bridge/RuntimeModels", {
  effect: Effect.gen(function* () {
    const catalogs = yield* ModelCatalogs
    const workdirs = yield* WorkdirRegistry
    const roots = yield* WorkdirRoots
    const settings = yield* BridgeSettingsTag

    /** Submit's authorization, for advice mode (nothing is acquired). */
    const authorizeAdvice = (
      runtime: string,
      workdirAlias: string,
      prompt: string,
      path: string,
      profile: string
    ) =>
      Effect.gen(function* () {
        if (profile !== "review" && profile !== "workspace-write") {
          return yield* new AgentProfileNotAllowed({
            message: "the profile must be review or workspace-write"
          })
        }
        const workdir = yield* workdirs.get(workdirAlias)
        yield* authorizeSubmission(workdir, { runtime, profile, path })
        yield* walkStartDirectory(roots.rootOf(workdir), workdir, path).pipe(
          Effect.mapError(toSubmitPathError)
        )
        if (utf8Length(prompt) > settings.maxPromptBytes) {
          return yield* new AgentPromptTooLarge({
            message: `the prompt exceeds ${settings.maxPromptBytes} bytes`
          })
        }
      })

    const models = (params: RuntimeModelsParams): Effect.Effect<RuntimeModelsResult, ModelsError> =>
      Effect.gen(function* () {
        const workdir = params.workdir ?? null
        const prompt = params.task_prompt ?? null
        const path = params.path ?? ""
        const profile = params.profile ?? "workspace-write"
        const advice = workdir !== null || prompt !== null || path !== "" || profile !== "workspace-write"
        if (advice) {
          if (workdir === null || prompt === null) {
            return yield* new InvalidRequest({
              message: "advice mode needs both workdir and task_prompt (path and profile only with them)"
            })
          }
          yield* authorizeAdvice(params.runtime, workdir, prompt, path, profile)
        }
        const catalog = yield* catalogs.catalog(params.runtime)
        const result: RuntimeModelsResult = { runtime: params.runtime, ...catalog }
        if (!advice) return result
        const modelAdvice: ModelAdvice =
          catalog.status !== "ok" || catalog.models.length === 0
            ? { status: "not_applicable", automatic: false }
            : { status: "disabled", automatic: false }
        return { ...result, model_advice: modelAdvice }
      })

    return { models } as const
  })
}) {}
