/**
 * The operator's human renderings (apps/cli/src/render): a timeline summary names text fields
 * by size and never prints them, shows only codes/states/ids/sizes, and strips control
 * characters; a task summary leaves out caller and provider text.
 */
import { describe, expect, it } from "vitest"
import { payloadSummary } from "../src/render/Timeline.js"

describe("payloadSummary", () => {
  it("shows codes and states, names text by size only", () => {
    expect(
      payloadSummary({
        text: "the secret plan for /srv/private",
        error_code: "BRIDGE_RESTARTED",
        provider_active: null,
        status: "UNKNOWN"
      })
    ).toBe("error_code=BRIDGE_RESTARTED provider_active=null status=UNKNOWN text=(32 chars)")
    expect(payloadSummary({ command_display: "rm -rf /srv/x", files: ["/a", "/b"], nested: { a: 1 } })).toBe(
      "command_display=(13 chars) files=(2 items) nested=(…)"
    )
  })

  it("cuts long values, strips control characters and bounds the field count", () => {
    expect(payloadSummary({ status: `a\u001b[31m${"x".repeat(60)}` })).toMatch(/^status=a\?\[31mx+…$/)
    expect([...payloadSummary({ status: "y".repeat(100) })].length).toBeLessThanOrEqual("status=".length + 40)
    const many = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, i]))
    expect(payloadSummary(many)).toBe("k0=0 k1=1 k2=2 k3=3 k4=4 k5=5 +3 more")
  })
})
