/**
 * Socket-path safety (bridge-internals §1.2): what the server creates, what it refuses to
 * touch, what it removes, and what it leaves behind on close.
 */
import fs from "node:fs"
import net from "node:net"
import path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { skipWithoutRoot } from "@serverfs/testkit"
import { Effect } from "effect"
import { makeBridgeClient, serveRpc } from "../src/index.js"
import { recordingHandler, SAMPLE_RESULTS, tempBase } from "./fixtures.js"

const own = { uid: null, gid: null } as const
const NOBODY = 65534
const modeOf = (p: string): number => fs.lstatSync(p).mode & 0o7777

const serveAt = (socketPath: string, sharedGid?: number) =>
  serveRpc({
    socketPath,
    allowedPeer: own,
    handle: recordingHandler().handle,
    ...(sharedGid === undefined ? {} : { sharedGid })
  })

/** The error of a server start that must fail (its scope is closed right away). */
const startFailure = (socketPath: string) =>
  Effect.flip(Effect.scoped(serveAt(socketPath))).pipe(Effect.map((error) => error._tag))

const callOnce = (socketPath: string) =>
  makeBridgeClient({ socketPath, timeoutSeconds: 10 }).call("task.cancel", { task_id: "agt_1" })

/**
 * A socket file with nothing listening: bind, keep a second name, let the server go. A third
 * name, `held`, keeps the inode allocated so a new socket cannot reuse its number.
 */
const staleSocket = (socketPath: string, held: string) =>
  Effect.async<void>((resume) => {
    const server = net.createServer()
    server.listen(socketPath, () => {
      fs.linkSync(socketPath, `${socketPath}.keep`)
      fs.linkSync(socketPath, held)
      // Node unlinks the bound path on close; the second name keeps the inode.
      server.close(() => {
        fs.renameSync(`${socketPath}.keep`, socketPath)
        resume(Effect.void)
      })
    })
  })

// These chown to uid/gid 65534 (or give a socket that group): root only; skipped otherwise.
const withoutRoot = skipWithoutRoot("chown to uid/gid 65534")

describe("what the server creates", () => {
  it.scopedLive("a missing directory is created 0700, the socket 0600, and nothing else is left in it", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const dir = path.join(base, "run")
      const socketPath = path.join(dir, "bridge.sock")
      const oldMask = process.umask(0o022)
      yield* Effect.ensuring(
        serveAt(socketPath),
        Effect.sync(() => process.umask(oldMask))
      )
      expect(fs.lstatSync(dir).isDirectory()).toBe(true)
      expect(modeOf(dir)).toBe(0o700)
      expect(fs.lstatSync(socketPath).isSocket()).toBe(true)
      expect(modeOf(socketPath)).toBe(0o600)
      expect(fs.lstatSync(socketPath).uid).toBe(process.geteuid?.())
      expect(fs.readdirSync(dir)).toEqual(["bridge.sock"])
      expect(yield* callOnce(socketPath)).toEqual(SAMPLE_RESULTS["task.cancel"])
    })
  )

  it.scopedLive("missing parents are created too", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "a", "b", "bridge.sock")
      yield* serveAt(socketPath)
      expect(modeOf(path.join(base, "a", "b"))).toBe(0o700)
      expect(yield* callOnce(socketPath)).toEqual(SAMPLE_RESULTS["task.cancel"])
    })
  )

  it.scopedLive.skipIf(withoutRoot)(
    "shared mode: directory 0750 and socket 0660, both in the shared group",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const dir = path.join(base, "run")
        const socketPath = path.join(dir, "bridge.sock")
        yield* serveAt(socketPath, NOBODY)
        expect(modeOf(dir)).toBe(0o750)
        expect(fs.lstatSync(dir).gid).toBe(NOBODY)
        expect(modeOf(socketPath)).toBe(0o660)
        expect(fs.lstatSync(socketPath).gid).toBe(NOBODY)
      })
  )

  it.scopedLive("an existing safe directory is brought to the configured mode (0700 private)", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const dir = path.join(base, "run")
      fs.mkdirSync(dir)
      fs.chmodSync(dir, 0o750)
      yield* serveAt(path.join(dir, "bridge.sock"))
      expect(modeOf(dir)).toBe(0o700)
      expect(modeOf(path.join(dir, "bridge.sock"))).toBe(0o600)
    })
  )

  it.scopedLive.skipIf(withoutRoot)(
    "switching to shared mode opens an existing private directory to the group (0750)",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const dir = path.join(base, "run")
        fs.mkdirSync(dir)
        fs.chmodSync(dir, 0o700)
        yield* serveAt(path.join(dir, "bridge.sock"), 65534)
        expect(modeOf(dir)).toBe(0o750)
        expect(fs.statSync(dir).gid).toBe(65534)
        expect(modeOf(path.join(dir, "bridge.sock"))).toBe(0o660)
      })
  )
})

describe("an existing path at the socket name", () => {
  it.scopedLive("a symlink → SOCKET_PATH_IN_USE, left untouched", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      fs.writeFileSync(path.join(base, "target"), "keep")
      fs.symlinkSync(path.join(base, "target"), socketPath)
      expect(yield* startFailure(socketPath)).toBe("SOCKET_PATH_IN_USE")
      expect(fs.readlinkSync(socketPath)).toBe(path.join(base, "target"))
      expect(fs.readFileSync(path.join(base, "target"), "utf8")).toBe("keep")
    })
  )

  it.scopedLive("a dangling symlink → SOCKET_PATH_IN_USE, nothing created at its target", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      fs.symlinkSync(path.join(base, "elsewhere.sock"), socketPath)
      expect(yield* startFailure(socketPath)).toBe("SOCKET_PATH_IN_USE")
      expect(fs.existsSync(path.join(base, "elsewhere.sock"))).toBe(false)
      expect(fs.lstatSync(socketPath).isSymbolicLink()).toBe(true)
    })
  )

  it.scopedLive("a regular file → SOCKET_PATH_IN_USE, left untouched", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      fs.writeFileSync(socketPath, "not a socket")
      expect(yield* startFailure(socketPath)).toBe("SOCKET_PATH_IN_USE")
      expect(fs.readFileSync(socketPath, "utf8")).toBe("not a socket")
    })
  )

  it.scopedLive("a live socket (another server) → SOCKET_PATH_IN_USE, and that server keeps working", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      yield* serveAt(socketPath)
      const inode = fs.lstatSync(socketPath).ino
      expect(yield* startFailure(socketPath)).toBe("SOCKET_PATH_IN_USE")
      expect(fs.lstatSync(socketPath).ino).toBe(inode)
      expect(yield* callOnce(socketPath)).toEqual(SAMPLE_RESULTS["task.cancel"])
    })
  )

  it.scopedLive("a stale socket of ours (connection refused) is removed and replaced", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const held = path.join(base, "held")
      fs.mkdirSync(held)
      yield* staleSocket(socketPath, path.join(held, "stale"))
      const staleInode = fs.lstatSync(socketPath).ino
      expect(fs.lstatSync(socketPath).isSocket()).toBe(true)
      yield* serveAt(socketPath)
      expect(fs.lstatSync(socketPath).ino).not.toBe(staleInode)
      // The stale inode lost its name at the socket path and nothing else of it was touched.
      expect(fs.lstatSync(path.join(held, "stale")).nlink).toBe(1)
      expect(yield* callOnce(socketPath)).toEqual(SAMPLE_RESULTS["task.cancel"])
    })
  )

  it.scopedLive.skipIf(withoutRoot)(
    "a stale socket of another owner → SOCKET_PATH_IN_USE, left untouched",
    () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const socketPath = path.join(base, "bridge.sock")
        yield* staleSocket(socketPath, path.join(base, "held"))
        fs.lchownSync(socketPath, NOBODY, NOBODY)
        const inode = fs.lstatSync(socketPath).ino
        expect(yield* startFailure(socketPath)).toBe("SOCKET_PATH_IN_USE")
        expect(fs.lstatSync(socketPath).ino).toBe(inode)
        expect(fs.lstatSync(socketPath).uid).toBe(NOBODY)
      })
  )
})

describe("unsafe socket directories → SOCKET_DIRECTORY_UNSAFE", () => {
  const unsafeCases: ReadonlyArray<{
    readonly name: string
    readonly needsRoot?: true
    readonly setup: (base: string) => string
  }> = [
    {
      name: "world-writable",
      setup: (base) => {
        fs.mkdirSync(path.join(base, "run"))
        fs.chmodSync(path.join(base, "run"), 0o777)
        return path.join(base, "run")
      }
    },
    {
      name: "world-writable even with the sticky bit",
      setup: (base) => {
        fs.mkdirSync(path.join(base, "run"))
        fs.chmodSync(path.join(base, "run"), 0o1777)
        return path.join(base, "run")
      }
    },
    {
      name: "group-writable",
      setup: (base) => {
        fs.mkdirSync(path.join(base, "run"))
        fs.chmodSync(path.join(base, "run"), 0o770)
        return path.join(base, "run")
      }
    },
    {
      name: "a symlink to a real directory",
      setup: (base) => {
        fs.mkdirSync(path.join(base, "real"), { mode: 0o700 })
        fs.symlinkSync(path.join(base, "real"), path.join(base, "run"))
        return path.join(base, "run")
      }
    },
    {
      name: "owned by another uid",
      needsRoot: true,
      setup: (base) => {
        fs.mkdirSync(path.join(base, "run"), { mode: 0o700 })
        fs.chownSync(path.join(base, "run"), NOBODY, NOBODY)
        return path.join(base, "run")
      }
    },
    {
      name: "a regular file",
      setup: (base) => {
        fs.writeFileSync(path.join(base, "run"), "")
        return path.join(base, "run")
      }
    }
  ]
  for (const unsafe of unsafeCases) {
    it.scopedLive.skipIf(unsafe.needsRoot === true && withoutRoot)(`${unsafe.name}`, () =>
      Effect.gen(function* () {
        const base = yield* tempBase
        const dir = unsafe.setup(base)
        const before = fs.lstatSync(dir)
        expect(yield* startFailure(path.join(dir, "bridge.sock"))).toBe("SOCKET_DIRECTORY_UNSAFE")
        // Nothing was bound, loosened or re-owned.
        const after = fs.lstatSync(dir)
        expect([after.mode, after.uid, after.gid]).toEqual([before.mode, before.uid, before.gid])
        if (fs.statSync(dir).isDirectory()) expect(fs.readdirSync(dir)).toEqual([])
      })
    )
  }

  it.live("a relative socket path", () =>
    Effect.gen(function* () {
      expect(yield* startFailure("run/bridge.sock")).toBe("SOCKET_DIRECTORY_UNSAFE")
    })
  )

  it.scopedLive("a socket path longer than sun_path allows", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, `${"s".repeat(120)}.sock`)
      expect(yield* startFailure(socketPath)).toBe("SOCKET_DIRECTORY_UNSAFE")
      expect(fs.readdirSync(base)).toEqual([])
    })
  )
})

describe("on close", () => {
  it.scopedLive("the socket is unlinked when the scope closes", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* serveAt(socketPath)
          expect(yield* callOnce(socketPath)).toEqual(SAMPLE_RESULTS["task.cancel"])
        })
      )
      expect(fs.existsSync(socketPath)).toBe(false)
      expect(fs.readdirSync(base)).toEqual([])
      // The path is free again: a new server starts there without any stale-socket handling.
      yield* Effect.scoped(serveAt(socketPath))
    })
  )

  it.scopedLive("a file that replaced the socket during the run survives close", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* serveAt(socketPath)
          fs.renameSync(socketPath, path.join(base, "moved.sock"))
          fs.writeFileSync(socketPath, "replacement")
        })
      )
      expect(fs.readFileSync(socketPath, "utf8")).toBe("replacement")
    })
  )

  it.scopedLive("another server's socket that replaced ours survives close and keeps serving", () =>
    Effect.gen(function* () {
      const base = yield* tempBase
      const socketPath = path.join(base, "bridge.sock")
      const other = path.join(base, "other")
      yield* serveAt(path.join(other, "bridge.sock"))
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* serveAt(socketPath)
          fs.renameSync(path.join(other, "bridge.sock"), socketPath)
        })
      )
      expect(fs.lstatSync(socketPath).isSocket()).toBe(true)
      expect(yield* callOnce(socketPath)).toEqual(SAMPLE_RESULTS["task.cancel"])
    })
  )
})
