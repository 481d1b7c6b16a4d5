import type * as net from "node:net"
import { Effect, Option } from "effect"
import { type Frame, LineBuffer } from "./LineBuffer.js"
import { waitTimer } from "./WaitTimer.js"

/**
 * Server-side I/O on one accepted connection, pull-based so the peer gets TCP-style
 * backpressure: the socket only flows while the server is waiting for the next request, is
 * paused as soon as a complete line (or an oversized one) is buffered, and the next request is
 * not read until the previous response has been handed to the kernel (`drain`). A client that
 * sends faster than the server answers, or never reads its answers, only fills its own socket
 * buffers.
 *
 * The socket must have been accepted with `pauseOnConnect` and must already carry an "error"
 * listener (a reset peer must never become an uncaught exception).
 *
 * The two waits on the peer (`next`, `drained`) carry their idle bound themselves (WaitTimer.ts):
 * the server waits twice per call (the request, then the peer's close).
 */
export type Incoming = Frame | { readonly _tag: "End" }

export type Sent = "sent" | "pending" | "closed"

const END: Incoming = { _tag: "End" }

export interface ConnectionIO {
  /**
   * The next request line, TooLarge, or End once the peer closed or the socket failed; None
   * when `idleMs` passed first.
   */
  readonly next: (idleMs: number) => Effect.Effect<Option.Option<Incoming>>
  /**
   * Hand one frame to the socket now, synchronously: "sent" when the kernel took all of it,
   * "pending" when the rest waits for `drain` (see `drained`), "closed" if the socket is gone.
   */
  readonly send: (frame: Uint8Array) => Effect.Effect<Sent>
  /**
   * After a "pending" send: true once the socket drained, false if it closed first; None when
   * `idleMs` passed first.
   */
  readonly drained: (idleMs: number) => Effect.Effect<Option.Option<boolean>>
  /** Flush what was written, send FIN and wait until the socket is closed. */
  readonly finish: Effect.Effect<void>
  /**
   * Send one last frame and close: FIN after the frame, then whatever the peer still sends is
   * read and dropped (at most `discardBytes`) until it closes its side, so the frame is not lost
   * to a reset caused by unread input. The caller bounds the wait with a timeout.
   */
  readonly closeWith: (frame: Uint8Array, discardBytes: number) => Effect.Effect<void>
}

export const connectionIO = (socket: net.Socket, maxLineBytes: number): ConnectionIO => {
  const lines = new LineBuffer(maxLineBytes)
  let ended = false
  let waiter: ((incoming: Incoming) => void) | undefined

  const settle = (): void => {
    if (waiter === undefined) return
    const ready = lines.take() ?? (ended ? END : undefined)
    if (ready === undefined) return
    const resume = waiter
    waiter = undefined
    socket.pause()
    resume(ready)
  }
  const onData = (chunk: Buffer): void => {
    lines.push(chunk)
    if (waiter === undefined) socket.pause()
    else settle()
  }
  const onEnd = (): void => {
    ended = true
    settle()
  }
  socket.on("data", onData)
  socket.on("end", onEnd)
  socket.on("close", onEnd)

  const next = (idleMs: number): Effect.Effect<Option.Option<Incoming>> =>
    Effect.async<Option.Option<Incoming>>((resume) => {
      const ready = lines.take() ?? (ended ? END : undefined)
      if (ready !== undefined) {
        resume(Effect.succeed(Option.some(ready)))
        return
      }
      const stop = (): void => {
        clearTimeout(timer)
        waiter = undefined
        socket.pause()
      }
      const timer = waitTimer(idleMs, () => {
        stop()
        resume(Effect.succeed(Option.none()))
      })
      waiter = (incoming) => {
        clearTimeout(timer)
        resume(Effect.succeed(Option.some(incoming)))
      }
      socket.resume()
      return Effect.sync(stop)
    })

  // The write is not an async effect: the answer reaches the kernel before the serving fiber
  // yields. When the write waited behind other fibers (it once ran inside a timeout's forked
  // fiber), a task.submit's turn, started just before the answer, ran its whole scripted task
  // before the answer was written (docs/performance.md, issue 12).
  const send = (frame: Uint8Array): Effect.Effect<Sent> =>
    Effect.sync(() => {
      if (socket.destroyed || !socket.writable) return "closed"
      return socket.write(frame) ? "sent" : "pending"
    })

  const drained = (idleMs: number): Effect.Effect<Option.Option<boolean>> =>
    Effect.async<Option.Option<boolean>>((resume) => {
      if (socket.destroyed) {
        resume(Effect.succeed(Option.some(false)))
        return
      }
      if (socket.writableLength === 0) {
        resume(Effect.succeed(Option.some(true)))
        return
      }
      const answer = (result: Option.Option<boolean>) => (): void => {
        cleanup()
        resume(Effect.succeed(result))
      }
      const onDrain = answer(Option.some(true))
      const onClose = answer(Option.some(false))
      const timer = waitTimer(idleMs, answer(Option.none()))
      const cleanup = (): void => {
        clearTimeout(timer)
        socket.off("drain", onDrain)
        socket.off("close", onClose)
      }
      socket.on("drain", onDrain)
      socket.on("close", onClose)
      return Effect.sync(cleanup)
    })

  const untilClosed = (start: () => void): Effect.Effect<void> =>
    Effect.async<void>((resume) => {
      if (socket.destroyed) {
        resume(Effect.void)
        return
      }
      const onClose = (): void => resume(Effect.void)
      socket.once("close", onClose)
      start()
      return Effect.sync(() => socket.off("close", onClose))
    })

  const finish = untilClosed(() => {
    // The peer already sent FIN (or vanished); once our FIN is flushed nothing is left.
    socket.end(() => socket.destroy())
  })

  const closeWith = (frame: Uint8Array, discardBytes: number): Effect.Effect<void> =>
    untilClosed(() => {
      socket.off("data", onData)
      socket.off("end", onEnd)
      let discarded = 0
      socket.on("data", (chunk: Buffer) => {
        discarded += chunk.length
        if (discarded > discardBytes) socket.destroy()
      })
      socket.on("end", () => socket.destroy())
      socket.end(frame)
      socket.resume()
    })

  return { next, send, drained, finish, closeWith }
}
