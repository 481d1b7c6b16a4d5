/**
 * The scripted runtime's language: one command per prompt line, `name:argument`. A prompt
 * whose first line is not a command is answered with an echo. Used by the tests and the demo;
 * it never reaches a model.
 */
export type ScriptedCommand =
  | { readonly _tag: "complete"; readonly text: string }
  | { readonly _tag: "say"; readonly text: string }
  | { readonly _tag: "events"; readonly count: number }
  | { readonly _tag: "approval"; readonly command: string }
  | { readonly _tag: "permission"; readonly ids: ReadonlyArray<string> }
  | { readonly _tag: "question"; readonly prompt: string; readonly multi: boolean }
  | { readonly _tag: "steer" }
  | { readonly _tag: "wait" }
  | { readonly _tag: "sleep"; readonly ms: number }
  | { readonly _tag: "large"; readonly bytes: number }
  | { readonly _tag: "fail"; readonly message: string }
  | { readonly _tag: "write"; readonly path: string; readonly content: string }
  | { readonly _tag: "survive" }

const count = (text: string, fallback: number): number => {
  const n = Number(text)
  return Number.isSafeInteger(n) && n >= 0 ? n : fallback
}

const parseLine = (line: string): ScriptedCommand | undefined => {
  const colon = line.indexOf(":")
  if (colon === -1) return undefined
  const name = line.slice(0, colon)
  const arg = line.slice(colon + 1)
  switch (name) {
    case "complete":
      return { _tag: "complete", text: arg }
    case "say":
      return { _tag: "say", text: arg }
    case "events":
      return { _tag: "events", count: count(arg, 1) }
    case "approval":
      return { _tag: "approval", command: arg }
    case "permission":
      return { _tag: "permission", ids: arg.split(",").filter((i) => i !== "") }
    case "question":
      return { _tag: "question", prompt: arg, multi: false }
    case "multi-question":
      return { _tag: "question", prompt: arg, multi: true }
    case "steer":
      return { _tag: "steer" }
    case "wait":
      return { _tag: "wait" }
    case "sleep":
      return { _tag: "sleep", ms: count(arg, 0) }
    case "large":
      return { _tag: "large", bytes: count(arg, 0) }
    case "fail":
      return { _tag: "fail", message: arg }
    case "write": {
      const eq = arg.indexOf("=")
      return eq === -1 ? undefined : { _tag: "write", path: arg.slice(0, eq), content: arg.slice(eq + 1) }
    }
    case "survive":
      return { _tag: "survive" }
    default:
      return undefined
  }
}

/** The commands of a prompt, or undefined when it is plain text (echoed back). */
export const parseScript = (prompt: string): ReadonlyArray<ScriptedCommand> | undefined => {
  const lines = prompt.split("\n").filter((l) => l.trim() !== "")
  const commands = lines.map(parseLine)
  if (commands.length === 0 || commands.some((c) => c === undefined)) return undefined
  return commands as ReadonlyArray<ScriptedCommand>
}

/** Deterministic text of exactly `bytes` UTF-8 bytes, mixing 1-, 2- and 3-byte characters. */
export const largeText = (bytes: number): string => {
  const unit = "aé€"
  const unitBytes = 6
  const whole = Math.floor(bytes / unitBytes)
  return unit.repeat(whole) + "a".repeat(bytes - whole * unitBytes)
}
