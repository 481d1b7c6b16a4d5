import * as net from "node:net"
import { Effect, type Scope } from "effect"

/**
 * A client connection to a Unix-domain socket, destroyed when the scope closes. It carries a
 * permanent no-op "error" listener: a late EPIPE/ECONNRESET must never become an uncaught error.
 */
export const connectUnix = (socketPath: string): Effect.Effect<net.Socket, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => net.createConnection({ path: socketPath }).on("error", () => {})),
    (socket) => Effect.sync(() => socket.destroy())
  )
