/**
 * Peer authorization (bridge-internals §1.3): a client running as another uid is refused with
 * PEER_NOT_AUTHORIZED (request_id null) before anything is dispatched, and accepted once that
 * uid/gid is the allowed peer. The other-uid client is a real process under
 * `setpriv --reuid=65534 --regid=65534 --clear-groups`, so SO_PEERCRED is the kernel's word.
 */
import { execFile } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { skipWithoutRoot } from "@serverfs/testkit"
import { Effect } from "effect"
import { type AllowedPeer, serveRpc } from "../src/index.js"
import { rawExchange, recordingHandler, requestLine, SAMPLE_RESULTS, tempBase } from "./fixtures.js"

const NOBODY = 65534

const setpriv = (process.env.PATH ?? "")
  .split(path.delimiter)
  .map((dir) => path.join(dir, "setpriv"))
  .find((candidate) => {
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })

const requireOtherUidSupport = (): string => {
  if (setpriv === undefined) {
    throw new Error("peer tests need setpriv(1) (util-linux) on PATH to run a client as uid 65534")
  }
  return setpriv
}

// Runs as uid/gid 65534: sends one line, prints what came back and whether the server closed.
const CLIENT_SCRIPT = `
const net = require("node:net")
const [socketPath, line] = process.argv.slice(2)
const socket = net.connect(socketPath)
let received = ""
let done = false
const report = (how) => {
  if (done) return
  done = true
  process.stdout.write(JSON.stringify({ received, how }))
  process.exit(0)
}
socket.on("connect", () => socket.write(line))
socket.on("data", (chunk) => {
  received += chunk
  if (received.endsWith("\\n")) socket.end()
})
socket.on("end", () => report("end"))
socket.on("error", (error) => report(error.code))
socket.on("close", () => report("close"))
`

interface OtherUidOutcome {
  readonly received: string
  readonly how: string
}

const runAsNobody = (base: string, socketPath: string, line: string): Effect.Effect<OtherUidOutcome> =>
  Effect.async<OtherUidOutcome>((resume) => {
    const binary = requireOtherUidSupport()
    const script = path.join(base, "client.cjs")
    fs.writeFileSync(script, CLIENT_SCRIPT, { mode: 0o644 })
    const child = execFile(
      binary,
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        "--clear-groups",
        process.execPath,
        script,
        socketPath,
        line
      ],
      { timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error)
          resume(Effect.die(new Error(`the uid ${NOBODY} client failed: ${error.message} ${stderr}`)))
        else resume(Effect.succeed(JSON.parse(stdout) as OtherUidOutcome))
      }
    )
    return Effect.sync(() => child.kill())
  })

/** A server in shared mode with group 65534, so uid/gid 65534 can reach and connect the socket. */
const serveShared = (allowedPeer: AllowedPeer) =>
  Effect.gen(function* () {
    requireOtherUidSupport()
    const base = yield* tempBase
    fs.chmodSync(base, 0o755)
    const socketPath = path.join(base, "run", "bridge.sock")
    const recorded = recordingHandler()
    yield* serveRpc({ socketPath, allowedPeer, sharedGid: NOBODY, handle: recorded.handle })
    return { base, socketPath, ...recorded }
  })

const parseLines = (text: string) =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as unknown)

// setpriv can switch the client to uid 65534 only as root: skipped otherwise.
describe.skipIf(skipWithoutRoot("setpriv runs the client as uid 65534"))(
  "peer credentials (SO_PEERCRED)",
  () => {
    it.scopedLive(
      "a client running as another uid is refused with PEER_NOT_AUTHORIZED; nothing is dispatched",
      () =>
        Effect.gen(function* () {
          const { base, socketPath, calls } = yield* serveShared({ uid: null, gid: null })
          const outcome = yield* runAsNobody(base, socketPath, requestLine({ request_id: "peer-1" }))
          expect(parseLines(outcome.received)).toEqual([
            {
              request_id: null,
              ok: false,
              error: { code: "PEER_NOT_AUTHORIZED", message: expect.any(String) }
            }
          ])
          expect(calls).toEqual([])
          // Our own process (the server's uid and gid) is still served.
          const own = yield* rawExchange(socketPath, requestLine({ request_id: "own" }), 1)
          expect(own.lines[0]).toEqual({ request_id: "own", ok: true, result: SAMPLE_RESULTS["task.get"] })
          expect(calls).toHaveLength(1)
        })
    )

    it.scopedLive("the same client is accepted when {uid: 65534, gid: 65534} is the allowed peer", () =>
      Effect.gen(function* () {
        const { base, socketPath, calls } = yield* serveShared({ uid: NOBODY, gid: NOBODY })
        const outcome = yield* runAsNobody(base, socketPath, requestLine({ request_id: "peer-2" }))
        expect(parseLines(outcome.received)).toEqual([
          { request_id: "peer-2", ok: true, result: SAMPLE_RESULTS["task.get"] }
        ])
        expect(calls).toEqual([{ method: "task.get", params: { task_id: "agt_1" } }])
        // And now the server's own uid is the stranger.
        const own = yield* rawExchange(socketPath, requestLine({ request_id: "own" }), "close")
        expect(own.lines).toEqual([
          { request_id: null, ok: false, error: { code: "PEER_NOT_AUTHORIZED", message: expect.any(String) } }
        ])
        expect(own.closed).toBe(true)
        expect(calls).toHaveLength(1)
      })
    )

    it.scopedLive("each configured value must match: the right uid with the wrong gid is refused", () =>
      Effect.gen(function* () {
        const { base, socketPath, calls } = yield* serveShared({ uid: NOBODY, gid: 0 })
        const outcome = yield* runAsNobody(base, socketPath, requestLine({ request_id: "peer-3" }))
        expect(parseLines(outcome.received)).toMatchObject([
          { request_id: null, ok: false, error: { code: "PEER_NOT_AUTHORIZED" } }
        ])
        expect(calls).toEqual([])
      })
    )

    it.scopedLive(
      "a null value is not checked when the other one is set: {uid: 65534, gid: null} accepts",
      () =>
        Effect.gen(function* () {
          const { base, socketPath, calls } = yield* serveShared({ uid: NOBODY, gid: null })
          const outcome = yield* runAsNobody(base, socketPath, requestLine({ request_id: "peer-4" }))
          expect(parseLines(outcome.received)).toMatchObject([{ request_id: "peer-4", ok: true }])
          expect(calls).toHaveLength(1)
        })
    )
  }
)
