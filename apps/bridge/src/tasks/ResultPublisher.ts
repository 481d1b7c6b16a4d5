import {
  AgentResultStorageError,
  AgentResultTooLarge,
  type HostPathRedaction,
  RESULT_PREVIEW_BYTES,
  sha256Hex
} from "@serverfs/domain"
import { ResultSpool, utf8Length, utf8Prefix } from "@serverfs/store"
import { Effect, Either } from "effect"
import { BridgeSettingsTag } from "../BridgeSettingsTag.js"
import { TaskEvents } from "./TaskEvents.js"
import { Terminations } from "./Terminations.js"

/**
 * A turn's final response made the task's result (spec v0.3 §19, bridge-internals §6): redacted,
 * bounded, stored inline when it fits one RPC frame, spooled to a file otherwise (with a preview).
 */
export class ResultPublisher extends Effect.Service<ResultPublisher>()("@serverfs/bridge/ResultPublisher", {
  effect: Effect.gen(function* () {
    const spool = yield* ResultSpool
    const events = yield* TaskEvents
    const terminations = yield* Terminations
    const settings = yield* BridgeSettingsTag

    const publish = (taskId: string, finalText: string, redaction: HostPathRedaction): Effect.Effect<void> =>
      Effect.gen(function* () {
        const text = redaction.text(finalText)
        const size = utf8Length(text)
        if (size > settings.maxFinalResponseBytes) {
          yield* terminations.terminate(
            taskId,
            new AgentResultTooLarge({
              message: `the final response exceeds ${settings.maxFinalResponseBytes} bytes`
            })
          )
          return
        }
        // Inline only if the result as JSON text fits the threshold: escaping can multiply its size
        // (a control character is 6 bytes as \\u00XX), and task.get must stay within one RPC frame.
        if (utf8Length(JSON.stringify(text)) - 2 <= settings.resultSpoolThresholdBytes) {
          yield* terminations.succeed(
            taskId,
            {
              final_response: text,
              result_storage: "inline",
              result_size_bytes: size,
              result_sha256: sha256Hex(text)
            },
            { result_storage: "inline", result_size_bytes: size }
          )
          return
        }
        const spooled = yield* spool.writeResult(taskId, text).pipe(Effect.either)
        if (Either.isLeft(spooled)) {
          yield* terminations.terminate(
            taskId,
            new AgentResultStorageError({ message: "the final response could not be stored" })
          )
          return
        }
        yield* events.append(taskId, "task.result_spooled", {
          size_bytes: spooled.right.size_bytes,
          sha256: spooled.right.sha256
        })
        yield* terminations.succeed(
          taskId,
          {
            final_response: utf8Prefix(
              text,
              Math.min(RESULT_PREVIEW_BYTES, settings.resultSpoolThresholdBytes)
            ),
            result_storage: "spool",
            result_size_bytes: spooled.right.size_bytes,
            result_sha256: spooled.right.sha256
          },
          { result_storage: "spool", result_size_bytes: spooled.right.size_bytes }
        )
      })

    return { publish } as const
  })
}) {}
