/**
 * The adapters' model mapping with hostile input (a provider the bridge does not trust): far
 * more rows than the cap, megabyte strings, rows of the wrong shape. What comes out is bounded
 * before the bridge bounds it again.
 */
import { describe, expect, it } from "@effect/vitest"
import { MAX_MODEL_DESCRIPTION_BYTES, MAX_MODEL_NAME_BYTES, MAX_MODELS } from "@serverfs/domain"
import { claudeListing } from "../src/claude/ClaudeModels.js"
import { toModelEntry } from "../src/codex/CodexModels.js"

const huge = "模".repeat(1_000_000)
const bytes = (s: string) => Buffer.byteLength(s, "utf8")

describe("Claude rows", () => {
  it("keep at most 64 well-formed rows with bounded strings; aliases and resolved ids are accepted", () => {
    const rows: Array<unknown> = [
      null,
      { value: 42, displayName: "wrong" },
      { value: huge, displayName: "too long an id" },
      ...Array.from({ length: 100_000 }, (_, i) => ({
        value: `m${i}`,
        resolvedModel: `claude-m${i}`,
        displayName: huge,
        description: huge,
        supportedEffortLevels: ["low", "high"]
      }))
    ]
    const listing = claudeListing(rows)
    expect(listing?.catalog).toMatchObject({
      status: "ok",
      scope: "current_account",
      source: "claude_agent_sdk"
    })
    const models = listing?.catalog.models ?? []
    expect(models.length).toBeLessThanOrEqual(MAX_MODELS)
    expect(models[0]).toMatchObject({ id: "m0", is_default: false, hidden: false, enabled: true })
    for (const m of models) {
      expect(bytes(m.display_name)).toBeLessThanOrEqual(MAX_MODEL_NAME_BYTES)
      expect(bytes(m.description ?? "")).toBeLessThanOrEqual(MAX_MODEL_DESCRIPTION_BYTES)
    }
    expect(listing?.accepted.has("m0")).toBe(true)
    expect(listing?.accepted.has("claude-m0")).toBe(true)
    expect(listing?.accepted.has(huge)).toBe(false)
    expect(claudeListing([])).toBeUndefined()
  })
})

describe("Codex items", () => {
  it("map to bounded entries", () => {
    const entry = toModelEntry({
      model: "gpt-x",
      displayName: huge,
      description: huge,
      hidden: true,
      isDefault: false,
      inputModalities: Array.from({ length: 1000 }, () => huge),
      supportedReasoningEfforts: [{ reasoningEffort: "low" }],
      defaultReasoningEffort: "low",
      serviceTiers: [{ id: "priority" }]
    })
    expect(entry).toMatchObject({
      id: "gpt-x",
      enabled: true,
      hidden: true,
      is_default: false,
      reasoning: { supported: ["low"], default: "low" },
      service_tiers: ["priority"]
    })
    expect(bytes(entry.display_name)).toBeLessThanOrEqual(MAX_MODEL_NAME_BYTES)
    expect(entry.display_name).not.toContain("\uFFFD")
    expect(entry.input_modalities?.length).toBe(16)
  })
})
