// Loads the compiled addon. The relative path resolves identically from
// src/ (tests run the TypeScript sources) and dist/ (the published build),
// both being one level below the package root next to build/.
import { createRequire } from "node:module"
import type { PeerCred, Stat } from "./types.js"

/** Numeric constants as read from the platform headers by the addon. */
export interface NativeConstants {
  readonly O: Readonly<Record<string, number>>
  readonly AT: Readonly<Record<string, number>>
  readonly RESOLVE: Readonly<Record<string, number>>
  readonly LOCK: Readonly<Record<string, number>>
  readonly RENAME: Readonly<Record<string, number>>
  readonly XATTR: Readonly<Record<string, number>>
  readonly DT: Readonly<Record<string, number>>
  readonly S: Readonly<Record<string, number>>
}

/** The raw addon surface; the typed, documented API lives in the other modules. */
export interface NativeBinding {
  readonly constants: NativeConstants
  openat(dirfd: number, name: string, flags: number, mode?: number): number
  openat2(dirfd: number, path: string, flags: number, mode: number, resolve: number): number
  fstatat(dirfd: number, name: string, flags: number): Stat
  fstat(fd: number): Stat
  /** Four cells per name: mode, size, mtime seconds, errno (0 = stat'ed). */
  fstatatEntries(dirfd: number, joined: string, flags: number, count: number): Float64Array
  linkat(olddirfd: number, oldname: string, newdirfd: number, newname: string, flags: number): void
  renameat(olddirfd: number, oldname: string, newdirfd: number, newname: string): void
  renameat2(olddirfd: number, oldname: string, newdirfd: number, newname: string, flags: number): void
  unlinkat(dirfd: number, name: string, flags: number): void
  mkdirat(dirfd: number, name: string, mode: number): void
  symlinkat(target: string, newdirfd: number, linkname: string): void
  mkfifoat(dirfd: number, name: string, mode: number): void
  fsync(fd: number): void
  close(fd: number): void
  fchown(fd: number, uid: number, gid: number): void
  fchmod(fd: number, mode: number): void
  /** Names joined by "/" (the one byte no name can contain), to cross N-API once. */
  readdir(dirfd: number): { joined: string; types: Uint8Array; undecodable: number }
  /** The same, read on the libuv thread pool. */
  readdirAsync(dirfd: number): Promise<{ joined: string; types: Uint8Array; undecodable: number }>
  flock(fd: number, operation: number): void
  peerCred(fd: number): PeerCred
  flistxattr(fd: number): string[]
  fgetxattr(fd: number, name: string): Buffer
  fsetxattr(fd: number, name: string, value: Uint8Array, flags: number): void
  fremovexattr(fd: number, name: string): void
}

const ADDON = "../build/Release/serverfs_posix.node"

function load(): NativeBinding {
  const require = createRequire(import.meta.url)
  try {
    return require(ADDON) as NativeBinding
  } catch (cause) {
    throw new Error(
      "@serverfs/posix: native addon not built; run `node scripts/build-native.mjs` in libs/posix " +
        "(npm ci runs it as the install script)",
      { cause }
    )
  }
}

export const native: NativeBinding = load()
