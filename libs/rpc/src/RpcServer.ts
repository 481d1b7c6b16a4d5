import * as net from "node:net"
import {
  BridgeClosed,
  MAX_FRAME_BYTES,
  PeerNotAuthorized,
  RequestTooLarge,
  type SocketDirectoryUnsafe,
  SocketPathInUse
} from "@serverfs/domain"
import { Context, Duration, Effect, FiberSet, Option, type Scope } from "effect"
import { type ConnectionIO, connectionIO } from "./ConnectionIO.js"
import { answer, type RpcHandler } from "./Dispatch.js"
import { type AllowedPeer, isPeerAllowed, readPeerCred, resolveAllowedPeer } from "./PeerCheck.js"
import { decodeRequest } from "./RequestDecoder.js"
import { errorFrame } from "./ResponseFrame.js"
import {
  bindingName,
  clearSocketPath,
  openSocketDirectory,
  procPath,
  publishSocket,
  type SocketIdentity,
  type SocketLocation,
  unlinkIfSame
} from "./SocketPath.js"

/**
 * The bridge side of NDJSON RPC v1 over a Unix-domain socket (bridge-internals §1).
 *
 * `serveRpc` binds the socket (see SocketPath for the path rules) and serves until its scope
 * closes. Each accepted connection is authorized by SO_PEERCRED before anything is read; then
 * its request lines are answered one at a time, in order, one response line each. Connections
 * are bounded in number and in idle time (see the options). Closing the
 * scope stops accepting, destroys open connections (interrupting requests in flight), and
 * unlinks the socket only if it is still the one this server published.
 */
export interface RpcServerOptions {
  /** Absolute path of the socket; its directory is created if missing. */
  readonly socketPath: string
  /** Both null → the server's own uid and gid. */
  readonly allowedPeer: AllowedPeer
  /** "Shared" mode: directory 0750 and socket 0660, both with this group. */
  readonly sharedGid?: number
  readonly handle: RpcHandler
  /**
   * Most connections open at once (default {@link DEFAULT_MAX_CONNECTIONS}). A new connection
   * over it takes the place of the connection idle the longest; when none is idle (every one has
   * a request in flight) it gets one BRIDGE_CLOSED line and is closed at once.
   */
  readonly maxConnections?: number
  /**
   * A connection that has not sent a complete request for this long — or has not read its
   * answer for this long — is closed (default {@link DEFAULT_IDLE_TIMEOUT_SECONDS} s). A
   * connection whose request is being handled is never idle.
   */
  readonly idleTimeoutSeconds?: number
}

export const DEFAULT_MAX_CONNECTIONS = 64
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 60

/** How long a refused connection may keep sending before it is cut off. */
const LINGER = Duration.seconds(1)

const lastWord = (io: ConnectionIO, frame: Uint8Array): Effect.Effect<void> =>
  Effect.asVoid(Effect.timeoutOption(io.closeWith(frame, MAX_FRAME_BYTES), LINGER))

const refuse = (socket: net.Socket): Effect.Effect<void> =>
  lastWord(
    connectionIO(socket, MAX_FRAME_BYTES),
    errorFrame(
      null,
      new PeerNotAuthorized({ message: "the connecting process is not authorized to use the Agent Bridge" })
    )
  ).pipe(Effect.ensuring(Effect.sync(() => socket.destroy())))

/**
 * What the server knows of one open connection: since when it has been waiting for its peer
 * (undefined while a request of it is being handled). Every descriptor the server holds has
 * one, so the connection limit bounds them all.
 */
interface Slot {
  idleSince: number | undefined
}

const tooMany = (limit: number) =>
  errorFrame(null, new BridgeClosed({ message: `the Agent Bridge has ${limit} connections open; try again` }))

const serveConnection = (
  socket: net.Socket,
  slot: Slot,
  handle: RpcHandler,
  idle: Duration.Duration
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const io = connectionIO(socket, MAX_FRAME_BYTES)
    const idleMs = Duration.toMillis(idle)
    /** A wait on the peer (bounded by `idleMs` itself): the connection is idle and evictable. */
    const waiting = <A>(
      wait: (idleMs: number) => Effect.Effect<Option.Option<A>>
    ): Effect.Effect<Option.Option<A>> =>
      Effect.suspend(() => {
        slot.idleSince = performance.now()
        return wait(idleMs)
      }).pipe(Effect.ensuring(Effect.sync(() => (slot.idleSince = undefined))))
    for (;;) {
      const next = yield* waiting(io.next)
      // Idle past the timeout: closed without a word (the peer sent nothing to answer).
      if (Option.isNone(next)) return
      const incoming = next.value
      if (incoming._tag === "End") return yield* io.finish
      if (incoming._tag === "TooLarge") {
        // The stream is out of sync once a frame is cut: answer once and close.
        return yield* lastWord(
          io,
          errorFrame(
            null,
            new RequestTooLarge({ message: `a request line exceeds ${MAX_FRAME_BYTES} bytes` })
          )
        )
      }
      const frame = yield* answer(handle, decodeRequest(incoming.bytes))
      // A client that went away mid-request only loses its answer; one that does not read it
      // within the idle timeout is closed. The frame goes to the kernel before this fiber
      // yields (ConnectionIO.send); only a full socket buffer makes it wait.
      const sent = yield* io.send(frame)
      if (sent === "closed") return
      if (sent === "pending" && !Option.getOrElse(yield* waiting(io.drained), () => false)) return
    }
  }).pipe(Effect.ensuring(Effect.sync(() => socket.destroy())))

const listen = (
  bindPath: string,
  onConnection: (socket: net.Socket) => void
): Effect.Effect<net.Server, SocketPathInUse> =>
  Effect.async<net.Server, SocketPathInUse>((resume) => {
    // pauseOnConnect: nothing is read from a peer before its credentials are checked.
    // allowHalfOpen: a client that sends its requests and then shuts down its write side
    // still gets every answer.
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, onConnection)
    const onError = (error: NodeJS.ErrnoException): void => {
      resume(
        Effect.fail(new SocketPathInUse({ message: `the socket cannot be bound (${error.code ?? "error"})` }))
      )
    }
    server.once("error", onError)
    server.listen(bindPath, () => {
      server.off("error", onError)
      resume(Effect.succeed(server))
    })
    return Effect.sync(() => server.close())
  })

const closeServer = (
  server: net.Server,
  sockets: Map<net.Socket, Slot>,
  location: SocketLocation,
  published: { identity: SocketIdentity | undefined }
): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    server.close(() => {
      if (published.identity !== undefined) unlinkIfSame(location, published.identity)
      resume(Effect.void)
    })
    for (const socket of sockets.keys()) socket.destroy()
  })

export const serveRpc = (
  options: RpcServerOptions
): Effect.Effect<void, SocketPathInUse | SocketDirectoryUnsafe, Scope.Scope> =>
  Effect.gen(function* () {
    const allowed = resolveAllowedPeer(options.allowedPeer)
    const location = yield* openSocketDirectory(options.socketPath, options.sharedGid)
    yield* clearSocketPath(location)

    // Released after the server (finalizers run in reverse): interrupts requests still in flight.
    const run = yield* FiberSet.makeRuntime<never, void, never>()
    const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS
    const idle = Duration.seconds(options.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS)
    // Insertion-ordered; at most maxConnections entries, so a scan for the oldest idle is cheap.
    const sockets = new Map<net.Socket, Slot>()
    /** The connection idle the longest, if any is idle. */
    const longestIdle = (): net.Socket | undefined => {
      let found: net.Socket | undefined
      let since = Number.POSITIVE_INFINITY
      for (const [socket, slot] of sockets) {
        if (slot.idleSince !== undefined && slot.idleSince < since) {
          found = socket
          since = slot.idleSince
        }
      }
      return found
    }
    const onConnection = (socket: net.Socket): void => {
      socket.on("error", () => {})
      if (sockets.size >= maxConnections) {
        // Idle connections must not lock out a real call (issue 14: 1,100 idle connections of
        // the bridge's own user exhausted its descriptors): the longest idle one makes room.
        const victim = longestIdle()
        if (victim === undefined) {
          // Every connection has a request in flight: one line, then closed (a fresh socket's
          // buffer takes the short frame at once; the timer only guards against a stuck flush).
          socket.setTimeout(Duration.toMillis(LINGER), () => socket.destroy())
          socket.end(tooMany(maxConnections), () => socket.destroy())
          return
        }
        sockets.delete(victim)
        victim.destroy()
      }
      const slot: Slot = { idleSince: performance.now() }
      sockets.set(socket, slot)
      socket.once("close", () => sockets.delete(socket))
      // SO_PEERCRED must be read now, synchronously, on the accepted fd.
      const cred = readPeerCred(socket)
      // A connection runs with an empty context: a handler needs no service from it (its type
      // says so), and every scope, span and transaction inside copies the context it runs in.
      // With the daemon's 30-odd services those copies were a tenth of the bridge's garbage per
      // task (issue 12, docs/performance.md).
      run(
        Effect.mapInputContext(
          cred !== undefined && isPeerAllowed(allowed, cred)
            ? serveConnection(socket, slot, options.handle, idle)
            : refuse(socket),
          () => Context.empty()
        )
      )
    }

    const published: { identity: SocketIdentity | undefined } = { identity: undefined }
    const bound = bindingName()
    const server = yield* Effect.acquireRelease(listen(procPath(location, bound), onConnection), (server) =>
      closeServer(server, sockets, location, published)
    )
    server.on("error", (error: NodeJS.ErrnoException) => {
      run(Effect.logWarning(`rpc server: accept failed (${error.code ?? "error"})`))
    })
    published.identity = yield* publishSocket(location, bound, options.sharedGid)
  })
