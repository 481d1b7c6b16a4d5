import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { TEMP_PREFIX } from "@serverfs/policy"
import { close, O, openat, unlinkat } from "@serverfs/posix"
import { Effect, type Scope } from "effect"
import type { At } from "../OsError.js"
import { codeOf } from "../OsError.js"
import { type MutationOsError, toMutationError } from "./MutationOsError.js"

/**
 * The same-directory temp file of atomic publication (spec v0.2 §4/§6): `.serverfs-tmp-<16 hex>`,
 * created O_EXCL|O_NOFOLLOW next to the target, in the reserved namespace no channel can
 * reach. Unless it was published (linked or renamed into place), leaving the scope removes it,
 * so a failure before publication leaves nothing behind.
 */
export interface TempFile {
  readonly fd: number
  readonly name: string
  /** Set once the temp name is gone (renamed over the target) or deliberately unlinked. */
  settled: boolean
}

const ATTEMPTS = 8

export const tempName = (): string => `${TEMP_PREFIX}${randomBytes(8).toString("hex")}`

const createSync = (parent: number, mode: number, at: At): TempFile | MutationOsError => {
  for (let attempt = 0; ; attempt++) {
    const name = tempName()
    try {
      const fd = openat(parent, name, O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW, mode)
      return { fd, name, settled: false }
    } catch (error) {
      if (codeOf(error) !== "EEXIST" || attempt + 1 >= ATTEMPTS) return toMutationError(error, at)
    }
  }
}

export const createTempFile = (
  parent: number,
  mode: number,
  at: At
): Effect.Effect<TempFile, MutationOsError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const made = createSync(parent, mode, at)
      return "fd" in made ? Effect.succeed(made) : Effect.fail(made)
    }),
    (temp) =>
      Effect.sync(() => {
        close(temp.fd)
        if (!temp.settled) {
          try {
            unlinkat(parent, temp.name, 0)
          } catch {
            // Already gone; nothing else can be done about debris here (it stays invisible).
          }
        }
      })
  )

/** Write every byte (short writes are continued). @throws the OS error */
export const writeAll = (fd: number, bytes: Uint8Array): void => {
  let written = 0
  while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written, written)
}
