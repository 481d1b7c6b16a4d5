/**
 * How a request location appears inside an error text: `<workdir>:<path>`.
 *
 * Both parts are the caller's own strings (never a host path). Control characters are escaped so
 * a hostile path cannot forge extra log lines or hide characters in a message, and very long
 * inputs are shortened so one bad call cannot flood a client or the audit log.
 */
const MAX_SHOWN = 300

const isControl = (unit: number): boolean =>
  unit < 0x20 || (unit >= 0x7f && unit <= 0x9f) || unit === 0x2028 || unit === 0x2029

/** Control characters (C0, DEL, C1, U+2028, U+2029) escaped as lowercase `\uXXXX`. */
export const escapeControl = (text: string): string => {
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    out += isControl(unit) ? `\\u${unit.toString(16).padStart(4, "0")}` : text[i]
  }
  return out
}

export const shown = (text: string): string => {
  const escaped = escapeControl(text)
  return escaped.length > MAX_SHOWN ? `${escaped.slice(0, MAX_SHOWN)}…` : escaped
}

export const location = (workdir: string, path: string): string => `${shown(workdir)}:${shown(path)}`

/** Python-repr style quoting the reference uses for aliases: `'nope'`. */
export const quoted = (text: string): string => `'${shown(text).replace(/'/g, "\\'")}'`
