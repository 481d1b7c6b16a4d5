import { spawn } from "node:child_process"
import type { ServerLaunch } from "./McpDriver.js"

/** serverfs-mcp serving Streamable HTTP, as the bench starts it. */
export interface HttpServerProcess {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  readonly pid: number
  readonly stderr: () => string
  /** SIGTERM, then wait for the exit (the server finishes in-flight calls first). */
  readonly stop: () => Promise<void>
}

const START_TIMEOUT_MS = 90_000
const STDERR_TAIL = 4096

/**
 * Start `launch` with SERVERFS_MCP_TRANSPORT=http on an ephemeral loopback port. The port is read
 * from the server's `http_listening` stderr line, which it writes whatever the log level.
 */
export const startHttpServerProcess = (launch: ServerLaunch): Promise<HttpServerProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(launch.command, [...launch.args], {
      env: { ...launch.env, SERVERFS_MCP_TRANSPORT: "http", SERVERFS_HTTP_PORT: "0" },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let tail = ""
    let pending = ""
    let listening = false
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      await exited
    }
    const fail = (why: string) => {
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(new Error(`${launch.label} over HTTP ${why}: ${tail}`))
    }
    const timer = setTimeout(() => fail(`did not listen within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS)
    child.once("exit", () => {
      if (!listening) fail("exited before listening")
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8")
      tail = (tail + text).slice(-STDERR_TAIL)
      if (listening) return
      pending += text
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (!line.includes('"http_listening"')) continue
        const record: unknown = JSON.parse(line)
        const port =
          typeof record === "object" && record !== null && "port" in record ? record.port : undefined
        if (typeof port !== "number") continue
        listening = true
        clearTimeout(timer)
        resolve({
          url: `http://127.0.0.1:${port}/mcp`,
          pid: child.pid ?? -1,
          stderr: () => tail,
          stop
        })
        return
      }
    })
  })
