import * as path from "node:path"
import { Either } from "effect"
import { ConfigurationError } from "./ConfigurationError.js"
import { isUnset } from "./Parsers.js"
import type { Lookup } from "./ProblemCollector.js"

/**
 * The Agent Bridge's own paths when no variable names them (spec v0.3 §6, §21, §22): the
 * deployment is user-scoped, so the socket and the lock directory live under the user's XDG data
 * directory and the state under the XDG state directory — a non-root user runs both processes
 * with no path variable set, and serverfs-mcp and the bridge of one user resolve the same files.
 * The `/run/...` system layout stays available by setting the variables.
 *
 * XDG Base Directory rules: a variable that is unset, empty or relative is ignored, and
 * `$HOME/.local/share` (`$HOME/.local/state`) is used instead. Without an absolute HOME either,
 * there is no default: that is a configuration error naming what to set (fail closed; never a
 * path relative to wherever the process was started, never a guess from the password database
 * that the other process might not make). Pure: every input comes through `lookup`.
 */
export const BRIDGE_DIRECTORY_NAME = "serverfs-agent-bridge"

/** The system layout (a root-managed install sets the variables to these). */
export const SYSTEM_BRIDGE_SOCKET = "/run/serverfs-agent-bridge/bridge.sock"
export const SYSTEM_LOCK_DIR = "/run/serverfs-agent-locks"

export const BRIDGE_SOCKET_VARIABLE = "SERVERFS_AGENT_BRIDGE_SOCKET"
export const LOCK_DIR_VARIABLE = "SERVERFS_AGENT_LOCK_DIR"
export const STATE_DIR_VARIABLE = "SERVERFS_AGENT_BRIDGE_STATE_DIR"

/** The environment variables the defaults are derived from (read with the configuration). */
export const BASE_DIRECTORY_VARIABLES = ["HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"] as const

/**
 * Where a resolved path came from: its own variable, that variable set to the system layout, the
 * XDG variable, or the HOME fallback of the XDG rules.
 */
export type PathOrigin = "variable" | "system layout" | "XDG_DATA_HOME" | "XDG_STATE_HOME" | "HOME"

export interface ResolvedRuntimePath {
  readonly variable: string
  readonly path: string
  readonly origin: PathOrigin
}

interface BaseDirectory {
  readonly xdgVariable: "XDG_DATA_HOME" | "XDG_STATE_HOME"
  /** Below HOME, when the XDG variable does not count. */
  readonly homeRelative: string
}

const DATA_HOME: BaseDirectory = { xdgVariable: "XDG_DATA_HOME", homeRelative: ".local/share" }
const STATE_HOME: BaseDirectory = { xdgVariable: "XDG_STATE_HOME", homeRelative: ".local/state" }

/** An absolute value of `variable`, or undefined (unset, blank or relative: ignored per XDG). */
const absoluteValue = (lookup: Lookup, variable: string): string | undefined => {
  const raw = lookup(variable)
  if (isUnset(raw)) return undefined
  const value = raw.trim()
  return path.isAbsolute(value) ? value : undefined
}

/**
 * `<base>/<below>` with its origin, or the error for `variable`: the problem names the three
 * variables any of which fixes it, never their (absent or relative) values.
 */
const underBase = (
  lookup: Lookup,
  variable: string,
  base: BaseDirectory,
  below: ReadonlyArray<string>
): Either.Either<ResolvedRuntimePath, ConfigurationError> => {
  const xdg = absoluteValue(lookup, base.xdgVariable)
  if (xdg !== undefined) {
    return Either.right({ variable, path: path.join(xdg, ...below), origin: base.xdgVariable })
  }
  const home = absoluteValue(lookup, "HOME")
  if (home !== undefined) {
    return Either.right({ variable, path: path.join(home, base.homeRelative, ...below), origin: "HOME" })
  }
  return Either.left(
    new ConfigurationError({
      variable,
      problem: `has no default: neither ${base.xdgVariable} nor HOME is set to an absolute path; set ${variable} (or ${base.xdgVariable}, or HOME)`
    })
  )
}

/** The variable's own (trimmed) value when set; its absoluteness is checked by the loader. */
const fromVariable = (
  lookup: Lookup,
  variable: string,
  systemPath?: string
): ResolvedRuntimePath | undefined => {
  const raw = lookup(variable)
  if (isUnset(raw)) return undefined
  const value = raw.trim()
  return { variable, path: value, origin: value === systemPath ? "system layout" : "variable" }
}

const resolve = (
  lookup: Lookup,
  variable: string,
  base: BaseDirectory,
  below: ReadonlyArray<string>,
  systemPath?: string
): Either.Either<ResolvedRuntimePath, ConfigurationError> => {
  const set = fromVariable(lookup, variable, systemPath)
  return set === undefined ? underBase(lookup, variable, base, below) : Either.right(set)
}

/** `$XDG_DATA_HOME/serverfs-agent-bridge/runtime/socket/bridge.sock` unless the variable is set. */
export const resolveBridgeSocket = (lookup: Lookup) =>
  resolve(
    lookup,
    BRIDGE_SOCKET_VARIABLE,
    DATA_HOME,
    [BRIDGE_DIRECTORY_NAME, "runtime", "socket", "bridge.sock"],
    SYSTEM_BRIDGE_SOCKET
  )

/** `$XDG_DATA_HOME/serverfs-agent-bridge/runtime/locks` unless the variable is set. */
export const resolveLockDir = (lookup: Lookup) =>
  resolve(lookup, LOCK_DIR_VARIABLE, DATA_HOME, [BRIDGE_DIRECTORY_NAME, "runtime", "locks"], SYSTEM_LOCK_DIR)

/** `$XDG_STATE_HOME/serverfs-agent-bridge` unless the variable is set. */
export const resolveStateDir = (lookup: Lookup) =>
  resolve(lookup, STATE_DIR_VARIABLE, STATE_HOME, [BRIDGE_DIRECTORY_NAME])

/** How the documentation states each default. */
export const DOCUMENTED_DEFAULTS = {
  socket: `$XDG_DATA_HOME/${BRIDGE_DIRECTORY_NAME}/runtime/socket/bridge.sock (XDG_DATA_HOME unset or relative: ~/.local/share)`,
  lockDir: `$XDG_DATA_HOME/${BRIDGE_DIRECTORY_NAME}/runtime/locks (XDG_DATA_HOME unset or relative: ~/.local/share)`,
  stateDir: `$XDG_STATE_HOME/${BRIDGE_DIRECTORY_NAME} (XDG_STATE_HOME unset or relative: ~/.local/state)`
} as const
