import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  AgentResultStorageError,
  InvalidResultLimit,
  InvalidResultOffset,
  MAX_RESULT_CHUNK_BYTES,
  sha256Hex
} from "@serverfs/domain"
import { close, openPrivateDirectorySync, PrivateDirectoryError } from "@serverfs/posix"
import { Context, Effect, Layer } from "effect"
import { isTaskId } from "./TaskRecord.js"
import { completeCharactersEnd, decodeUtf8, isContinuationByte, utf8Bytes } from "./Utf8.js"

/**
 * The large-result spool (spec v0.7 §2.5, bridge-internals §5): `<stateDir>/results/<task_id>.txt`,
 * directory 0700, files 0600, both owned by this uid. A result is published once, atomically
 * (private temp file, fsync, no-clobber link into place, fsync of the directory); an existing
 * result is never replaced. Reads return exact UTF-8 chunks: a chunk starts on a character
 * boundary and never ends inside a character, so the concatenated chunks are the stored bytes.
 */
export const RESULTS_DIRECTORY = "results"

export interface SpooledResult {
  readonly size_bytes: number
  readonly sha256: string
}

export interface ResultChunk {
  readonly text: string
  readonly offset_bytes: number
  readonly next_offset_bytes: number
  readonly eof: boolean
}

export type ReadResultError = AgentResultStorageError | InvalidResultOffset | InvalidResultLimit

export interface ResultSpoolShape {
  /** Publishes the result of `taskId` (a string is stored as UTF-8; bytes must be UTF-8). */
  readonly writeResult: (
    taskId: string,
    content: string | Uint8Array
  ) => Effect.Effect<SpooledResult, AgentResultStorageError>
  /** At most `maxBytes` (1..65536) bytes starting at byte `offsetBytes`, cut to whole characters. */
  readonly readResult: (
    taskId: string,
    offsetBytes: number,
    maxBytes: number
  ) => Effect.Effect<ResultChunk, ReadResultError>
  /** Removes the result of `taskId`; false when there was none. */
  readonly removeResult: (taskId: string) => Effect.Effect<boolean, AgentResultStorageError>
}

const storageError = (message: string) => new AgentResultStorageError({ message })

const checkTaskId = (taskId: string): AgentResultStorageError | undefined =>
  isTaskId(taskId) ? undefined : storageError("the task id is not valid for the result spool")

const checkLimit = (
  offsetBytes: number,
  maxBytes: number
): InvalidResultLimit | InvalidResultOffset | undefined => {
  if (!Number.isSafeInteger(offsetBytes) || offsetBytes < 0)
    return new InvalidResultOffset({ message: "offset_bytes must be a non-negative integer" })
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_RESULT_CHUNK_BYTES)
    return new InvalidResultLimit({ message: `max_bytes must be between 1 and ${MAX_RESULT_CHUNK_BYTES}` })
  return undefined
}

const toBytes = (content: string | Uint8Array): Uint8Array | AgentResultStorageError => {
  if (typeof content === "string") return utf8Bytes(content)
  return decodeUtf8(content) === undefined ? storageError("the result is not valid UTF-8") : content
}

/**
 * The chunk arithmetic of `readResult`, over any byte source: `read(offset, length)` returns the
 * bytes stored there (fewer only at the end).
 */
export const chunkAt = (
  size: number,
  offsetBytes: number,
  maxBytes: number,
  read: (offset: number, length: number) => Uint8Array
): ResultChunk | ReadResultError => {
  const invalid = checkLimit(offsetBytes, maxBytes)
  if (invalid !== undefined) return invalid
  if (offsetBytes > size)
    return new InvalidResultOffset({ message: "offset_bytes is past the end of the result" })
  if (offsetBytes === size) return { text: "", offset_bytes: offsetBytes, next_offset_bytes: size, eof: true }
  const bytes = read(offsetBytes, Math.min(maxBytes, size - offsetBytes))
  if (bytes.length === 0) return storageError("the stored result is shorter than recorded")
  if (isContinuationByte(bytes[0] ?? 0))
    return new InvalidResultOffset({ message: "offset_bytes is not on a UTF-8 character boundary" })
  const end = offsetBytes + bytes.length < size ? completeCharactersEnd(bytes) : bytes.length
  if (end === 0)
    return new InvalidResultLimit({ message: "max_bytes is smaller than the next character of the result" })
  const text = decodeUtf8(bytes.subarray(0, end))
  if (text === undefined) return storageError("the stored result is not valid UTF-8")
  const next = offsetBytes + end
  return { text, offset_bytes: offsetBytes, next_offset_bytes: next, eof: next === size }
}

// ---------------------------------------------------------------------------------------------
// Files

const currentUid = (): number => process.getuid?.() ?? -1

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null ? (error as NodeJS.ErrnoException).code : undefined

/** A system error code (EIO, ENOSPC, …), not Node's argument-validation ERR_* codes (bugs). */
const isErrnoCode = (code: string | undefined): boolean => code !== undefined && /^E[A-Z0-9]+$/.test(code)

const isPrivate = (st: fs.Stats, mode: number): boolean =>
  st.uid === currentUid() && (st.mode & 0o777) === mode

/**
 * The results directory, checked on every operation by the one private-directory check: a real
 * directory, ours, exactly 0700 — refused, never repaired, otherwise. With `create`, a missing
 * one is made (0700 whatever the umask); without, a missing one is `undefined`.
 */
const resultsDirectory = (stateDir: string, create: boolean): string | undefined => {
  const dir = path.join(stateDir, RESULTS_DIRECTORY)
  const checked = openPrivateDirectorySync(dir, { mode: 0o700, existing: "exact", create })
  if (checked instanceof PrivateDirectoryError) {
    if (checked.problem === "missing") return undefined
    throw storageError(
      checked.problem === "cannot-create"
        ? "the result spool cannot be created"
        : checked.problem === "cannot-inspect"
          ? "the result spool cannot be inspected"
          : "the result spool directory is unsafe"
    )
  }
  close(checked.fd)
  return dir
}

const fsyncDirectory = (dir: string): void => {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY)
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

const writeFile = (stateDir: string, taskId: string, bytes: Uint8Array): void => {
  const dir = resultsDirectory(stateDir, true)!
  const target = path.join(dir, `${taskId}.txt`)
  const temp = path.join(dir, `.${taskId}.${randomBytes(8).toString("hex")}.tmp`)
  let published = false
  try {
    const fd = fs.openSync(
      temp,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
      0o600
    )
    try {
      fs.fchmodSync(fd, 0o600)
      let written = 0
      while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    // link(2) is the no-clobber rename: it fails with EEXIST atomically when a result is
    // already there, where rename(2) would silently replace it.
    try {
      fs.linkSync(temp, target)
    } catch (error) {
      throw errnoOf(error) === "EEXIST"
        ? storageError("a result is already stored for this task")
        : storageError("the result could not be published")
    }
    published = true
    fs.unlinkSync(temp)
    fsyncDirectory(dir)
  } catch (error) {
    if (!published) fs.rmSync(temp, { force: true })
    throw error instanceof AgentResultStorageError ? error : storageError("the result could not be written")
  }
}

const readFileChunk = (
  stateDir: string,
  taskId: string,
  offsetBytes: number,
  maxBytes: number
): ResultChunk | ReadResultError => {
  const invalid = checkLimit(offsetBytes, maxBytes)
  if (invalid !== undefined) return invalid
  const dir = resultsDirectory(stateDir, false)
  if (dir === undefined) return storageError("the stored result is missing")
  let fd: number
  try {
    // O_NOFOLLOW: a symlink planted as the result fails here (ELOOP) instead of being read.
    fd = fs.openSync(
      path.join(dir, `${taskId}.txt`),
      fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK
    )
  } catch (error) {
    return errnoOf(error) === "ENOENT"
      ? storageError("the stored result is missing")
      : storageError("the stored result cannot be opened")
  }
  try {
    const st = fs.fstatSync(fd)
    if (!st.isFile() || !isPrivate(st, 0o600)) return storageError("the stored result file is unsafe")
    return chunkAt(st.size, offsetBytes, maxBytes, (offset, length) => {
      const buffer = Buffer.alloc(length)
      let filled = 0
      while (filled < length) {
        const n = fs.readSync(fd, buffer, filled, length - filled, offset + filled)
        if (n === 0) break
        filled += n
      }
      return buffer.subarray(0, filled)
    })
  } finally {
    fs.closeSync(fd)
  }
}

const removeFile = (stateDir: string, taskId: string): boolean => {
  const dir = resultsDirectory(stateDir, false)
  if (dir === undefined) return false
  try {
    fs.unlinkSync(path.join(dir, `${taskId}.txt`))
    return true
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false
    throw storageError("the stored result could not be removed")
  }
}

/** An I/O failure (errno) is AGENT_RESULT_STORAGE_ERROR; anything else is a defect, not relabelled. */
const attempt = <A>(f: () => A): Effect.Effect<A, AgentResultStorageError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(f())
    } catch (error) {
      if (error instanceof AgentResultStorageError) return Effect.fail(error)
      if (isErrnoCode(errnoOf(error))) return Effect.fail(storageError("the result spool failed"))
      return Effect.die(error)
    }
  })

const isReadError = (value: ResultChunk | ReadResultError): value is ReadResultError =>
  value instanceof AgentResultStorageError ||
  value instanceof InvalidResultOffset ||
  value instanceof InvalidResultLimit

const liftChunk = (outcome: ResultChunk | ReadResultError): Effect.Effect<ResultChunk, ReadResultError> =>
  isReadError(outcome) ? Effect.fail(outcome) : Effect.succeed(outcome)

const makeFileSpool = (stateDir: string): ResultSpoolShape => ({
  writeResult: (taskId, content) =>
    Effect.suspend(() => {
      const invalid = checkTaskId(taskId)
      if (invalid !== undefined) return Effect.fail(invalid)
      const bytes = toBytes(content)
      if (bytes instanceof AgentResultStorageError) return Effect.fail(bytes)
      return Effect.as(
        attempt(() => writeFile(stateDir, taskId, bytes)),
        {
          size_bytes: bytes.length,
          sha256: sha256Hex(bytes)
        }
      )
    }),
  readResult: (taskId, offsetBytes, maxBytes) =>
    Effect.suspend(() => {
      const invalid = checkTaskId(taskId)
      if (invalid !== undefined) return Effect.fail(invalid)
      return Effect.flatMap(
        attempt(() => readFileChunk(stateDir, taskId, offsetBytes, maxBytes)),
        liftChunk
      )
    }),
  removeResult: (taskId) =>
    Effect.suspend(() => {
      const invalid = checkTaskId(taskId)
      return invalid !== undefined ? Effect.fail(invalid) : attempt(() => removeFile(stateDir, taskId))
    })
})

/** An in-memory spool with the same checks and chunking, for unit tests (`TaskStore.layerMemory`). */
const makeMemorySpool = (): ResultSpoolShape => {
  const results = new Map<string, Uint8Array>()
  return {
    writeResult: (taskId, content) =>
      Effect.suspend(() => {
        const invalid = checkTaskId(taskId)
        if (invalid !== undefined) return Effect.fail(invalid)
        const bytes = toBytes(content)
        if (bytes instanceof AgentResultStorageError) return Effect.fail(bytes)
        if (results.has(taskId)) return Effect.fail(storageError("a result is already stored for this task"))
        results.set(taskId, Uint8Array.from(bytes))
        return Effect.succeed({ size_bytes: bytes.length, sha256: sha256Hex(bytes) })
      }),
    readResult: (taskId, offsetBytes, maxBytes) =>
      Effect.suspend(() => {
        const invalid = checkTaskId(taskId)
        if (invalid !== undefined) return Effect.fail(invalid)
        const stored = results.get(taskId)
        if (stored === undefined) return Effect.fail(storageError("the stored result is missing"))
        const outcome = chunkAt(stored.length, offsetBytes, maxBytes, (offset, length) =>
          stored.subarray(offset, offset + length)
        )
        return liftChunk(outcome)
      }),
    removeResult: (taskId) =>
      Effect.suspend(() => {
        const invalid = checkTaskId(taskId)
        return invalid !== undefined ? Effect.fail(invalid) : Effect.succeed(results.delete(taskId))
      })
  }
}

export class ResultSpool extends Context.Tag("@serverfs/store/ResultSpool")<ResultSpool, ResultSpoolShape>() {
  /** The spool under `<stateDir>/results/` (the state directory is checked by `TaskStore.layer`). */
  static readonly layer = (options: { readonly stateDir: string }): Layer.Layer<ResultSpool> =>
    Layer.sync(ResultSpool, () => makeFileSpool(options.stateDir))

  static readonly layerMemory = (): Layer.Layer<ResultSpool> => Layer.sync(ResultSpool, makeMemorySpool)
}
