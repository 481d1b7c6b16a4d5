import { createRequire } from "node:module"
import {
  canonicalJson,
  MAX_INTERACTION_BYTES,
  MAX_MESSAGE_BYTES,
  type Manifest,
  type RuntimeInfo,
  sha256Hex
} from "@serverfs/domain"
import type { BridgeSettings, Workdir } from "@serverfs/policy"

const { version } = createRequire(import.meta.url)("../../package.json") as { readonly version: string }
export const BRIDGE_VERSION = version

/**
 * The immutable execution manifest of a task (spec v0.7 §2.4): what is needed to interpret its
 * result later. No host path; the workdir's policy appears only as a hash.
 */
export const policyHash = (workdir: Workdir): string =>
  sha256Hex(
    canonicalJson({
      read_only: workdir.readOnly,
      agent_mode: workdir.agentMode,
      agent_runtimes: workdir.agentRuntimes,
      allow_hidden: workdir.policy.settings.allowHidden,
      disable_default_deny: workdir.policy.settings.disableDefaultDeny,
      extra_deny_globs: workdir.policy.settings.extraDenyGlobs,
      max_read_bytes: workdir.maxReadBytes,
      max_read_lines: workdir.maxReadLines,
      max_write_bytes: workdir.maxWriteBytes
    })
  )

export const buildManifest = (input: {
  readonly runtime: RuntimeInfo
  readonly inFlightRecovery: Manifest["runtime"]["in_flight_recovery"]
  readonly workdir: Workdir
  readonly relativeCwd: string
  readonly profile: string
  readonly model: string | null
  readonly continueFrom: string | null
  readonly correlationId: string | null
  readonly idempotencyKey: string | null
  readonly deadlineAt: string
  readonly settings: BridgeSettings
}): Manifest => ({
  schema_version: 2,
  bridge_version: BRIDGE_VERSION,
  protocol_version: 1,
  runtime: {
    name: input.runtime.name,
    version: input.runtime.version ?? null,
    in_flight_recovery: input.inFlightRecovery
  },
  workspace: {
    alias: input.workdir.alias,
    slot: input.workdir.slot,
    relative_cwd: input.relativeCwd,
    profile: input.profile
  },
  policy: {
    read_only: input.workdir.readOnly,
    agent_mode: input.workdir.agentMode,
    policy_sha256: policyHash(input.workdir)
  },
  model: { requested: input.model },
  limits: {
    max_prompt_bytes: input.settings.maxPromptBytes,
    max_message_bytes: MAX_MESSAGE_BYTES,
    max_event_bytes: input.settings.maxEventBytes,
    max_interaction_bytes: MAX_INTERACTION_BYTES,
    max_events_per_task: input.settings.maxEventsPerTask,
    max_active_tasks: input.settings.maxActiveTasks,
    task_timeout_seconds: input.settings.taskTimeoutSeconds,
    interaction_timeout_seconds: input.settings.interactionTimeoutSeconds,
    retention_seconds: input.settings.retentionSeconds,
    result_spool_threshold_bytes: input.settings.resultSpoolThresholdBytes
  },
  continuation: { from_task_id: input.continueFrom },
  correlation_id: input.correlationId,
  idempotency_key: input.idempotencyKey,
  deadline_at: input.deadlineAt
})
