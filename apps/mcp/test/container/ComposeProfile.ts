import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import { parse } from "yaml"

/** deploy/container/, found from this file so the tests run from any working directory. */
export const containerDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../../deploy/container"
)

/** The compose service as the tests read it: only the keys the profile promises, decoded. */
const Volume = Schema.Struct({
  type: Schema.String,
  source: Schema.String,
  target: Schema.String,
  read_only: Schema.Union(Schema.Boolean, Schema.String)
})
const Limit = Schema.Struct({ soft: Schema.Number, hard: Schema.Number })
export const ComposeService = Schema.Struct({
  image: Schema.String,
  pull_policy: Schema.optional(Schema.String),
  user: Schema.String,
  read_only: Schema.optional(Schema.Boolean),
  cap_drop: Schema.optional(Schema.Array(Schema.String)),
  security_opt: Schema.optional(Schema.Array(Schema.String)),
  network_mode: Schema.optional(Schema.String),
  stdin_open: Schema.optional(Schema.Boolean),
  pids_limit: Schema.optional(Schema.Number),
  ulimits: Schema.optional(Schema.Record({ key: Schema.String, value: Limit })),
  environment: Schema.Record({ key: Schema.String, value: Schema.String }),
  volumes: Schema.Array(Volume)
})
export type ComposeService = typeof ComposeService.Type
const ComposeFile = Schema.Struct({
  services: Schema.Struct({
    "serverfs-mcp": Schema.Struct({ ...ComposeService.fields }, { key: Schema.String, value: Schema.Unknown })
  })
})

/** The parsed document (every key, for the tests that look for keys that must be absent). */
export const loadComposeDocument = (): unknown =>
  parse(fs.readFileSync(path.join(containerDir, "compose.yaml"), "utf8"))

export const loadComposeService = (): ComposeService & Readonly<Record<string, unknown>> =>
  Schema.decodeUnknownSync(ComposeFile)(loadComposeDocument()).services["serverfs-mcp"]

/**
 * The compose service's hardening keys as `podman run` flags, so the container test runs with
 * exactly what compose.yaml says rather than a second hand-written list that could drift.
 */
export const hardeningFlags = (service: ComposeService): ReadonlyArray<string> => {
  const flags: Array<string> = []
  if (service.read_only === true) flags.push("--read-only")
  for (const capability of service.cap_drop ?? []) flags.push("--cap-drop", capability)
  for (const option of service.security_opt ?? []) flags.push("--security-opt", option)
  if (service.network_mode !== undefined) flags.push("--network", service.network_mode)
  if (service.pids_limit !== undefined) flags.push("--pids-limit", String(service.pids_limit))
  for (const [name, limit] of Object.entries(service.ulimits ?? {}))
    flags.push("--ulimit", `${name}=${limit.soft}:${limit.hard}`)
  return flags
}
