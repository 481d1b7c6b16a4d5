import { FrozenErrorClass } from "./FrozenErrorClass.js"
import { shown } from "./Location.js"

/**
 * An argument that does not match a tool's input schema. The reference leaves these to the MCP
 * framework without a ServerFS code; this implementation gives them one so clients and the audit
 * log can classify them (docs/errors.md). The text always names the field.
 */
export class InvalidArgument extends FrozenErrorClass("INVALID_ARGUMENT", {
  tool: "string",
  field: "string",
  problem: "string"
}) {
  override get message() {
    const field = this.field === "" ? "arguments" : shown(this.field)
    return `${shown(this.tool)}: ${field} — ${shown(this.problem)}`
  }
}
