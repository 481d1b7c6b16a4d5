import * as net from "node:net"
import { MAX_FRAME_BYTES, type SocketDirectoryUnsafe, SocketPathInUse } from "@serverfs/domain"
import { Duration, Effect, FiberSet, type Scope } from "effect"
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
 * its request lines are answered one at a time, in order, one response line each. Closing the
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
}

/** How long a refused connection may keep sending before it is cut off. */
const LINGER = Duration.seconds(1)

const lastWord = (io: ConnectionIO, frame: Uint8Array): Effect.Effect<void> =>
  Effect.asVoid(Effect.timeoutOption(io.closeWith(frame, MAX_FRAME_BYTES), LINGER))

const refuse = (socket: net.Socket): Effect.Effect<void> =>
  lastWord(
    connectionIO(socket, MAX_FRAME_BYTES),
    errorFrame(
      null,
      "PEER_NOT_AUTHORIZED",
      "the connecting process is not authorized to use the Agent Bridge"
    )
  ).pipe(Effect.ensuring(Effect.sync(() => socket.destroy())))

const serveConnection = (socket: net.Socket, handle: RpcHandler): Effect.Effect<void> =>
  Effect.gen(function* () {
    const io = connectionIO(socket, MAX_FRAME_BYTES)
    for (;;) {
      const incoming = yield* io.next
      if (incoming._tag === "End") return yield* io.finish
      if (incoming._tag === "TooLarge") {
        // The stream is out of sync once a frame is cut: answer once and close.
        return yield* lastWord(
          io,
          errorFrame(null, "REQUEST_TOO_LARGE", `a request line exceeds ${MAX_FRAME_BYTES} bytes`)
        )
      }
      const frame = yield* answer(handle, decodeRequest(incoming.bytes))
      // A client that went away mid-request only loses its answer.
      if (!(yield* io.write(frame))) return
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
  sockets: Set<net.Socket>,
  location: SocketLocation,
  published: { identity: SocketIdentity | undefined }
): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    server.close(() => {
      if (published.identity !== undefined) unlinkIfSame(location, published.identity)
      resume(Effect.void)
    })
    for (const socket of sockets) socket.destroy()
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
    const sockets = new Set<net.Socket>()
    const onConnection = (socket: net.Socket): void => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
      socket.on("error", () => {})
      // SO_PEERCRED must be read now, synchronously, on the accepted fd.
      const cred = readPeerCred(socket)
      run(
        cred !== undefined && isPeerAllowed(allowed, cred)
          ? serveConnection(socket, options.handle)
          : refuse(socket)
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
