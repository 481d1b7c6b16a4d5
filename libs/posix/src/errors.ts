import type { PosixError } from "./types.js"

/** True for errors thrown by this package's syscall wrappers (see {@link PosixError}). */
export function isPosixError(err: unknown): err is PosixError {
  return (
    err instanceof Error &&
    typeof (err as Partial<PosixError>).code === "string" &&
    typeof (err as Partial<PosixError>).errno === "number" &&
    typeof (err as Partial<PosixError>).syscall === "string"
  )
}

/**
 * True when a non-blocking call failed only because it would block, e.g.
 * `flock(fd, LOCK.EX | LOCK.NB)` on a file another process holds. Linux
 * reports this as EAGAIN (EWOULDBLOCK is the same number there); other
 * platforms may spell it EWOULDBLOCK, so both are accepted.
 */
export function isWouldBlock(err: unknown): boolean {
  return isPosixError(err) && (err.code === "EAGAIN" || err.code === "EWOULDBLOCK")
}
