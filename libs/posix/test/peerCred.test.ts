// Attack: a local user other than the operator connecting to the server's
// Unix socket. SO_PEERCRED is the kernel's word on who connected.
import { spawn } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AT, close, O, openat, peerCred } from "../src/index.js"
import { expectPosixError, makeTempDir, removeTempDir } from "./helpers.js"

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

const SETPRIV = (process.env.PATH ?? "")
  .split(path.delimiter)
  .map((d) => path.join(d, "setpriv"))
  .find((p) => isExecutable(p))
const isRoot = process.getuid?.() === 0
const skipOtherUid = !SETPRIV || !isRoot
if (skipOtherUid) {
  console.warn(
    `peerCred: skipping the other-uid case: ${SETPRIV ? "needs root to switch uid" : "setpriv(1) is not installed"}`
  )
}

let dir: string
let socketPath: string
let server: net.Server
let onPeer: ((cred: ReturnType<typeof peerCred> | Error) => void) | undefined

beforeAll(async () => {
  dir = makeTempDir()
  // mkdtemp makes 0700; uid 65534 must be able to reach and write the socket.
  fs.chmodSync(dir, 0o755)
  socketPath = path.join(dir, "s.sock")
  server = net.createServer((socket) => {
    // Read the credentials synchronously in the handler, on the accepted fd.
    const handle = (socket as unknown as { _handle?: { fd?: number } })._handle
    let result: ReturnType<typeof peerCred> | Error
    try {
      result = peerCred(handle?.fd ?? -1)
    } catch (err) {
      result = err as Error
    }
    socket.end()
    onPeer?.(result)
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  fs.chmodSync(socketPath, 0o777)
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  removeTempDir(dir)
})

function nextPeer(): Promise<ReturnType<typeof peerCred>> {
  return new Promise((resolve, reject) => {
    onPeer = (cred) => {
      onPeer = undefined
      if (cred instanceof Error) reject(cred)
      else resolve(cred)
    }
  })
}

describe("peerCred", () => {
  it("reports our own pid/uid/gid for a client in this process", async () => {
    const peer = nextPeer()
    const client = net.connect(socketPath)
    client.on("error", () => {})
    const cred = await peer
    client.destroy()
    expect(cred).toEqual({ pid: process.pid, uid: process.getuid?.(), gid: process.getgid?.() })
  })

  it.skipIf(skipOtherUid)(
    "reports uid/gid 65534 and the pid of a client running as another user",
    async () => {
      const peer = nextPeer()
      const script = `const s = require("node:net").connect(${JSON.stringify(socketPath)}); s.on("error", () => process.exit(3)); s.on("close", () => process.exit(0)); s.resume()`
      const child = spawn(
        SETPRIV as string,
        ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script],
        { stdio: "inherit" }
      )
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
      const cred = await peer
      // setpriv execs node, so the connecting process keeps the spawned pid.
      expect(cred).toEqual({ pid: child.pid, uid: 65534, gid: 65534 })
      expect(await exited).toBe(0)
    }
  )

  it("fails with ENOTSOCK on a file and EBADF on a bad fd", () => {
    const fd = openat(AT.FDCWD, dir, O.RDONLY | O.DIRECTORY)
    expectPosixError(() => peerCred(fd), "ENOTSOCK", "getsockopt")
    close(fd)
    expectPosixError(() => peerCred(-1), "EBADF", "getsockopt")
  })
})
