import { InvalidArgument } from "@serverfs/domain"
import { Either } from "effect"

/**
 * The resource template `serverfs://{workdir}/{path}` (tool-contracts §3). `{path}` may span
 * several segments (`serverfs://docs/guide/intro.md`).
 *
 * The path is percent-decoded exactly once and then goes through the same normalization and
 * policy as every tool path: `%2E%2E/etc` decodes to `../etc` and is refused as
 * PATH_OUTSIDE_WORKDIR — an encoding can never smuggle a traversal past the policy, and
 * `%252E` stays the literal name `%2E`.
 */
export const RESOURCE_SCHEME = "serverfs://"

export const RESOURCE_TEMPLATE = {
  uriTemplate: `${RESOURCE_SCHEME}{workdir}/{path}`,
  name: "ServerFS file",
  title: "ServerFS file",
  description:
    "A whole UTF-8 text file of a workdir, read-only. Files larger than one read_text_file page are refused; use read_text_file to page through them.",
  mimeType: "text/plain"
} as const

export interface ResourceLocation {
  readonly workdir: string
  readonly path: string
}

const invalid = (problem: string) => new InvalidArgument({ tool: "resources/read", field: "uri", problem })

export const parseResourceUri = (uri: string): Either.Either<ResourceLocation, InvalidArgument> => {
  if (!uri.startsWith(RESOURCE_SCHEME)) return Either.left(invalid(`must start with ${RESOURCE_SCHEME}`))
  const rest = uri.slice(RESOURCE_SCHEME.length)
  const slash = rest.indexOf("/")
  const rawWorkdir = slash === -1 ? rest : rest.slice(0, slash)
  const rawPath = slash === -1 ? "" : rest.slice(slash + 1)
  try {
    return Either.right({ workdir: decodeURIComponent(rawWorkdir), path: decodeURIComponent(rawPath) })
  } catch {
    return Either.left(invalid("malformed percent-encoding"))
  }
}

/** The canonical URI of a workdir-relative path: each segment percent-encoded, "/" kept. */
export const resourceUri = (workdir: string, relative: string): string =>
  `${RESOURCE_SCHEME}${encodeURIComponent(workdir)}/${relative.split("/").map(encodeURIComponent).join("/")}`
