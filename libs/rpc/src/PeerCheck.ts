import type * as net from "node:net"
import { type PeerCred, peerCred } from "@serverfs/posix"

/**
 * Peer authorization on accept (bridge-internals §1.3). SO_PEERCRED gives the uid and gid the
 * kernel recorded when the peer called connect(); nothing the peer sends can change them.
 *
 * If both allowed values are null the server allows exactly its own effective uid and gid (-1,
 * which matches no peer, where the platform cannot tell them: fail closed).
 * Otherwise each configured value must equal the peer's and a null one is not checked (the
 * reference's rule: "each configured value must equal the peer's").
 */
export interface AllowedPeer {
  readonly uid: number | null
  readonly gid: number | null
}

export const resolveAllowedPeer = (allowed: AllowedPeer): AllowedPeer =>
  allowed.uid === null && allowed.gid === null
    ? { uid: process.geteuid?.() ?? -1, gid: process.getegid?.() ?? -1 }
    : allowed

export const isPeerAllowed = (allowed: AllowedPeer, cred: PeerCred): boolean =>
  (allowed.uid === null || allowed.uid === cred.uid) && (allowed.gid === null || allowed.gid === cred.gid)

/**
 * The peer's credentials, read synchronously from the accepted socket's fd: this must run
 * inside the server's `connection` handler, before the fd can be closed or reused. Undefined
 * when they cannot be read, which refuses the peer.
 */
export const readPeerCred = (socket: net.Socket): PeerCred | undefined => {
  // net.Socket keeps its libuv handle in the undocumented `_handle`; read it without trusting it.
  const handle: unknown = Reflect.get(socket, "_handle")
  const fd: unknown = typeof handle === "object" && handle !== null ? Reflect.get(handle, "fd") : undefined
  if (typeof fd !== "number" || fd < 0) return undefined
  try {
    return peerCred(fd)
  } catch {
    return undefined
  }
}
