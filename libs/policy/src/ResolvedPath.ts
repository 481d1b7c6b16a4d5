import {
  AccessDenied,
  DeniedPath,
  HiddenPathNotAllowed,
  PathOutsideWorkdir,
  type PathPolicyError,
  ReservedPath
} from "@serverfs/domain"
import { Either } from "effect"
import { normalizeRequestPath } from "./RequestPath.js"
import type { Workdir } from "./Workdir.js"

/**
 * A request path that passed normalization and the workdir's policy (tool-contracts §5). Every
 * channel starts from one of these; none re-derives the rules.
 *
 * `requested` is the caller's string exactly as given (errors and audit lines echo it),
 * `components` is what the descriptor walk opens, `relative` is the normalized form outputs use.
 */
export interface ResolvedPath {
  readonly workdir: Workdir
  readonly requested: string
  readonly components: ReadonlyArray<string>
  readonly relative: string
}

export const resolvePath = (
  workdir: Workdir,
  requested: string
): Either.Either<ResolvedPath, PathPolicyError> => {
  const at = { workdir: workdir.alias, path: requested }
  const normalized = normalizeRequestPath(requested)
  switch (normalized._tag) {
    case "nul":
      return Either.left(new AccessDenied({ ...at, reason: "path contains NUL bytes" }))
    case "outside":
      return Either.left(new PathOutsideWorkdir(at))
    case "ok":
      break
  }
  const { components } = normalized
  switch (workdir.policy.check(components)) {
    case "reserved":
      return Either.left(new ReservedPath(at))
    case "hidden":
      return Either.left(new HiddenPathNotAllowed(at))
    case "denied":
      return Either.left(new DeniedPath(at))
    case "allowed":
      return Either.right({ workdir, requested, components, relative: components.join("/") })
  }
}
