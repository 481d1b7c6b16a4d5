import { Schema } from "effect"
import type { Fields } from "../errors/FrozenErrorClass.js"
import {
  FROZEN_ERRORS,
  type FrozenError,
  type FrozenErrorCode,
  isFrozenErrorCode
} from "../errors/FrozenErrors.js"

/**
 * A frozen error on the RPC wire (bridge-internals §1.4): `{code, message}`, the code being the
 * class's tag and the message its `message`, verbatim. Going back — on the client — the registry
 * names the class, and the class's own fields are recovered from the message by inverting the
 * class's message template: the template is rendered with a marker per field, the wire message
 * is matched against it, and the candidate is accepted only if it renders the wire message again
 * byte for byte. An agent-plane class has the single field `message`; a filesystem class relayed
 * by the bridge (WORKDIR_BUSY, WORKDIR_NOT_FOUND, ...) has `workdir` (and `path`). A message that
 * does not invert (a shortened alias, a numeric field) yields no class; the caller relays it.
 */
export const WireError = Schema.Struct({ code: Schema.String, message: Schema.String })
export type WireError = typeof WireError.Type

export const errorToWire = (error: FrozenError): WireError => ({ code: error._tag, message: error.message })

/** An instance of `code`'s class from its string fields (the constructor runs, so does `message`). */
const build = (code: FrozenErrorCode, props: Record<string, string>): FrozenError =>
  new FROZEN_ERRORS[code](props as never)

/** Private-use characters: never escaped by `shown`, never in a template's own text. */
const marker = (index: number): string => String.fromCharCode(0xe000 + index)

const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")

/** The class's string fields, or undefined when one of them is not a plain string. */
const stringFields = (fields: Fields): ReadonlyArray<string> | undefined => {
  const names = Object.keys(fields)
  return names.every((name) => fields[name] === "string") ? names : undefined
}

const invert = (code: FrozenErrorCode, message: string): FrozenError | undefined => {
  const names = stringFields(FROZEN_ERRORS[code].fields)
  if (names === undefined || names.length === 0) return undefined
  const template = build(code, Object.fromEntries(names.map((name, i) => [name, marker(i)]))).message
  // The pattern comes from our own class's template, never from the wire.
  let pattern = ""
  const groups: Array<number> = []
  for (const char of template) {
    const index = char.charCodeAt(0) - 0xe000
    if (index >= 0 && index < names.length) {
      if (groups.includes(index)) pattern += `\\${groups.indexOf(index) + 1}`
      else {
        groups.push(index)
        pattern += "([\\s\\S]*?)"
      }
    } else pattern += escapeRegExp(char)
  }
  if (groups.length !== names.length) return undefined
  const match = new RegExp(`^${pattern}$`).exec(message)
  if (match === null) return undefined
  const props: Record<string, string> = {}
  groups.forEach((index, group) => {
    props[names[index] ?? ""] = match[group + 1] ?? ""
  })
  const candidate = build(code, props)
  return candidate.message === message ? candidate : undefined
}

/** The registered class of `code`, rebuilt from the wire message, if it inverts exactly. */
export const errorFromWire = (wire: WireError): FrozenError | undefined => {
  return isFrozenErrorCode(wire.code) ? invert(wire.code, wire.message) : undefined
}
