import { native } from "./native.js"
import type { PeerCred } from "./types.js"

/**
 * getsockopt(SO_PEERCRED) on a connected Unix socket fd: the pid/uid/gid the
 * kernel recorded for the peer at connect() time. Unlike anything received
 * over the socket, the peer cannot forge these. Linux only (ENOSYS elsewhere).
 *
 * @throws {@link PosixError} (syscall "getsockopt"); ENOTSOCK / EBADF on a non-socket.
 */
export function peerCred(fd: number): PeerCred {
  return native.peerCred(fd)
}
