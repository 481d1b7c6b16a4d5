/**
 * The build's warm-up run for V8's code cache (scripts/bundle.mjs, libs/policy CodeCache.ts):
 * starts serverfs-mcp's CommonJS server bundle on a small temporary workdir exactly as the
 * shipped entry does (the heap flag first: V8 checks its flags against the cache), answers the
 * start-up handshake and one call of each read tool, and on stdin EOF the process writes
 * `<bundle>.cache` with every function it compiled. A warm-up that fails leaves no cache: the
 * program then compiles at start as it would without one, and the build says so.
 *
 *   node scripts/code-cache.mjs --serve BUNDLE.cjs   (the child; the build calls warmCodeCache)
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const policy = (module) => pathToFileURL(join(root, "libs", "policy", "dist", module)).href

/** What the warm-up asks: the handshake, then each read tool once. */
const requests = [
  {
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "warm-up", version: "0" } }
  },
  { method: "tools/list" },
  ...[
    ["list_workdirs", {}],
    ["stat_file", { workdir: "warm", path: "a.txt" }],
    ["read_text_file", { workdir: "warm", path: "a.txt" }],
    ["list_directory", { workdir: "warm", path: "" }],
    ["find_files", { workdir: "warm", pattern: "*.txt" }],
    ["search_text", { workdir: "warm", query: "line" }]
  ].map(([name, args]) => ({ method: "tools/call", params: { name, arguments: args } }))
]

const WARM_UP_SECONDS = 60

export const warmCodeCache = async (bundle) => {
  const workdir = fs.mkdtempSync(join(os.tmpdir(), "serverfs-warm-up-"))
  fs.writeFileSync(join(workdir, "a.txt"), "line one\nline two\n")
  fs.mkdirSync(join(workdir, "sub"))
  try {
    await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", bundle], {
        stdio: ["pipe", "pipe", "pipe"],
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          WORKDIR_01_ALIAS: "warm",
          WORKDIR_01_PATH: workdir,
          SERVERFS_LOG_LEVEL: "ERROR"
        }
      })
      const timer = setTimeout(() => child.kill("SIGKILL"), WARM_UP_SECONDS * 1000)
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      let buffered = ""
      let next = 0
      const send = () => {
        const request = requests[next]
        if (request === undefined) return child.stdin.end()
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: next, ...request })}\n`)
        if (next === 0)
          child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`)
        next += 1
      }
      // One request at a time, each after the answer to the one before.
      child.stdout.on("data", (chunk) => {
        buffered += chunk
        for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
          buffered = buffered.slice(end + 1)
          send()
        }
      })
      child.on("exit", (code, signal) => {
        clearTimeout(timer)
        if (code === 0 && fs.existsSync(`${bundle}.cache`)) resolve()
        else
          reject(
            new Error(`warm-up exited ${signal ?? code}${stderr ? `: ${stderr.trim().slice(0, 500)}` : ""}`)
          )
      })
      send()
    })
  } catch (error) {
    fs.rmSync(`${bundle}.cache`, { force: true })
    process.stderr.write(
      `bundle: no code cache for ${bundle.split("/").at(-1)} (it starts without one): ${error.message}\n`
    )
  } finally {
    fs.rmSync(workdir, { recursive: true, force: true })
  }
}

if (process.argv[2] === "--serve") {
  const { keepHeapSmall } = await import(policy("HeapTuning.js"))
  const { runCommonJsBundle } = await import(policy("CodeCache.js"))
  keepHeapSmall()
  runCommonJsBundle(pathToFileURL(process.argv[3]), { writeOnExit: true })
}
