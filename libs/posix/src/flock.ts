import { native } from "./native.js"

/**
 * flock(2) on an fd (an O_RDONLY fd suffices for LOCK.EX). Locks belong to
 * the open file description, so they exclude other processes and other
 * opens, and are released when the last fd of the description closes.
 *
 * Without `LOCK.NB` this blocks the whole JS thread until the lock is free;
 * server code should pass `LOCK.NB` and retry on {@link isWouldBlock}.
 *
 * @throws {@link PosixError} (syscall "flock"); with LOCK.NB on a held lock, code "EAGAIN".
 */
export function flock(fd: number, operation: number): void {
  native.flock(fd, operation)
}
