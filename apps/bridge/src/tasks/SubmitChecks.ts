import { canonicalJson, InvalidRequest, MAX_MODEL_BYTES, MAX_TOKEN_BYTES, sha256Hex } from "@serverfs/domain"
import { utf8Length } from "@serverfs/store"
import { Either } from "effect"

/**
 * Shape checks of task.submit (bridge-internals §3/§6, spec v0.7 §2.1): opaque metadata is
 * bounded and free of control characters; a model id is request-scoped and must be a clean
 * token. Pure functions; the service turns a problem into INVALID_REQUEST.
 */
// The contract's limits live in @serverfs/domain (ContractLimits); the prompt, event and
// events-per-task limits (spec v0.3 §23) are settings: BridgeSettings.

// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find ASCII control characters
const CONTROL = /[\u0000-\u001f\u007f]/

const invalid = (message: string) => new InvalidRequest({ message })

export const checkCorrelationId = (value: string | null): Either.Either<string | null, InvalidRequest> => {
  if (value === null) return Either.right(null)
  if (utf8Length(value) > MAX_TOKEN_BYTES)
    return Either.left(invalid(`correlation_id exceeds ${MAX_TOKEN_BYTES} bytes`))
  if (CONTROL.test(value)) return Either.left(invalid("correlation_id contains control characters"))
  return Either.right(value)
}

export const checkIdempotencyKey = (value: string | null): Either.Either<string | null, InvalidRequest> => {
  if (value === null) return Either.right(null)
  if (value === "") return Either.left(invalid("idempotency_key must not be empty"))
  if (utf8Length(value) > MAX_TOKEN_BYTES)
    return Either.left(invalid(`idempotency_key exceeds ${MAX_TOKEN_BYTES} bytes`))
  if (CONTROL.test(value)) return Either.left(invalid("idempotency_key contains control characters"))
  return Either.right(value)
}

export const checkModel = (value: string | null): Either.Either<string | null, InvalidRequest> => {
  if (value === null) return Either.right(null)
  if (value === "" || value.trim() !== value) {
    return Either.left(invalid("model must be non-empty without surrounding whitespace"))
  }
  if (utf8Length(value) > MAX_MODEL_BYTES)
    return Either.left(invalid(`model exceeds ${MAX_MODEL_BYTES} bytes`))
  if (CONTROL.test(value)) return Either.left(invalid("model contains control characters"))
  return Either.right(value)
}

/**
 * The request fingerprint of idempotency (bridge-internals §6): the same key with the same
 * request returns the same task; with a different request it is refused. correlation_id is not
 * part of it: spec v0.7 §2.1 says it is never used for idempotency (bridge-internals, older,
 * included it) — a retry that carries a new correlation id is still the same request.
 */
export const requestFingerprint = (request: {
  readonly runtime: string
  readonly workdir: string
  readonly path: string
  readonly profile: string
  readonly prompt: string
  readonly model: string | null
  readonly continueFrom: string | null
}): string =>
  sha256Hex(
    canonicalJson({
      runtime: request.runtime,
      workdir: request.workdir,
      path: request.path,
      profile: request.profile,
      prompt_sha256: sha256Hex(request.prompt),
      requested_model: request.model,
      continue_from_task_id: request.continueFrom
    })
  )
