import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"

/**
 * The live MCP sessions of the HTTP transport: one SDK Server and transport per session, with
 * what its idle expiry and the per-session request bound need. A session leaves the table when
 * it is closed (DELETE, idle expiry, shutdown); its id then gets 404 and the client re-initializes.
 */
export interface Session {
  readonly transport: StreamableHTTPServerTransport
  readonly server: Server
  /** Clock milliseconds of the last request's end (or start, while one is in flight). */
  lastSeen: number
  /** POST requests in flight. */
  posts: number
  /** Open GET (server-to-client) streams. */
  streams: number
}

export interface Sessions {
  readonly get: (id: string) => Session | undefined
  readonly add: (id: string, session: Session) => void
  /** Close one session (idempotent): its transport's streams end and its SDK server is freed. */
  readonly close: (id: string) => Promise<void>
  readonly closeAll: () => Promise<void>
  /** Sessions open plus sessions being initialized: what the session cap counts. */
  readonly count: () => number
  readonly reserve: () => void
  readonly release: () => void
  /** Ids of sessions with nothing in flight and no request since `before`. */
  readonly idleSince: (before: number) => ReadonlyArray<string>
  /** POSTs in flight across every session (the shutdown waits for them). */
  readonly postsInFlight: () => number
}

export const makeSessions = (): Sessions => {
  const table = new Map<string, Session>()
  let initializing = 0
  const close = async (id: string) => {
    const session = table.get(id)
    if (session === undefined) return
    table.delete(id)
    // Closing the server closes its transport (every stream of the session ends).
    await session.server.close().catch(() => undefined)
  }
  return {
    get: (id) => table.get(id),
    add: (id, session) => {
      table.set(id, session)
    },
    close,
    closeAll: async () => {
      await Promise.all([...table.keys()].map(close))
    },
    count: () => table.size + initializing,
    reserve: () => {
      initializing++
    },
    release: () => {
      initializing--
    },
    idleSince: (before) =>
      [...table.entries()]
        .filter(([, s]) => s.posts === 0 && s.streams === 0 && s.lastSeen < before)
        .map(([id]) => id),
    postsInFlight: () => {
      let n = 0
      for (const s of table.values()) n += s.posts
      return n
    }
  }
}
