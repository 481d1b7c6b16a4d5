import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ServerLaunch } from "./McpDriver.js"

/**
 * Where the two servers' entry points are. Both are plain `node <entry>` processes, started with
 * this Node binary, so neither gets a shell or an npx wrapper the other lacks.
 *
 * - serverfs-mcp: the `bin` of the workspace package @serverfs/mcp (its bundle, dist/bundle/serverfs-mcp.js),
 *   or SERVERFS_MCP_MAIN.
 * - server-filesystem: the `bin` of @modelcontextprotocol/server-filesystem as resolved from this
 *   package, or from BENCH_DEPS_DIR (a scratch `npm install` folder) when the workspace does not
 *   have it, or SERVER_FILESYSTEM_MAIN.
 */
const require = createRequire(import.meta.url)

const binOf = (packageName: string, extraPaths: ReadonlyArray<string>, hint: string): string => {
  let manifest: string
  try {
    manifest = require.resolve(`${packageName}/package.json`, {
      paths: [path.dirname(fileURLToPath(import.meta.url)), ...extraPaths]
    })
  } catch {
    throw new Error(`cannot find ${packageName}: ${hint}`)
  }
  const pkg = JSON.parse(fs.readFileSync(manifest, "utf8")) as { bin?: string | Record<string, string> }
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin ?? {})[0]
  if (bin === undefined) throw new Error(`${packageName} has no bin`)
  return path.resolve(path.dirname(manifest), bin)
}

const existing = (file: string, hint: string): string => {
  if (!fs.existsSync(file)) throw new Error(`${file} does not exist: ${hint}`)
  return file
}

export const serverfsEntry = (): string =>
  existing(
    process.env.SERVERFS_MCP_MAIN ?? binOf("@serverfs/mcp", [], "run npm install at the repository root"),
    "build first: npx tsc -b tsconfig.build.json"
  )

export const serverFilesystemEntry = (): string => {
  const override = process.env.SERVER_FILESYSTEM_MAIN
  if (override !== undefined) return existing(override, "SERVER_FILESYSTEM_MAIN")
  const extra = process.env.BENCH_DEPS_DIR
  const hint =
    "run npm install at the repository root (bench/ is a workspace), or set BENCH_DEPS_DIR to a folder " +
    "where it is installed, or SERVER_FILESYSTEM_MAIN to its dist/index.js"
  return existing(
    binOf("@modelcontextprotocol/server-filesystem", extra === undefined ? [] : [extra], hint),
    hint
  )
}

export const serverFilesystemVersion = (entry: string): string => {
  const manifest = path.join(path.dirname(entry), "..", "package.json")
  return (JSON.parse(fs.readFileSync(manifest, "utf8")) as { version: string }).version
}

/**
 * With BENCH_PROFILE_DIR set, every serverfs-mcp and serverfs-bridge process is started with
 * `node --cpu-prof` and writes its profile there when it exits (server-filesystem is not).
 */
export const profileArgs = (): string[] => {
  const dir = process.env.BENCH_PROFILE_DIR
  return dir === undefined || dir === "" ? [] : ["--cpu-prof", `--cpu-prof-dir=${path.resolve(dir)}`]
}

/** serverfs-mcp with one workdir `bench` on the tree, audit lines off (errors only). */
export const serverfsLaunch = (root: string, maxSearchResults: number): ServerLaunch => ({
  label: "ServerFS",
  command: process.execPath,
  args: [...profileArgs(), serverfsEntry()],
  env: {
    WORKDIR_01_ALIAS: "bench",
    WORKDIR_01_PATH: root,
    SERVERFS_MAX_SEARCH_RESULTS: String(maxSearchResults),
    SERVERFS_LOG_LEVEL: "ERROR"
  }
})

/**
 * serverfs-mcp with one read-write workdir `bench` (the mutation tools work only there), audit
 * lines off. The Agent bridge stays disabled, so a mutation takes the process lock but no lease.
 */
export const serverfsMutationLaunch = (root: string): ServerLaunch => ({
  label: "ServerFS",
  command: process.execPath,
  args: [...profileArgs(), serverfsEntry()],
  env: {
    WORKDIR_01_ALIAS: "bench",
    WORKDIR_01_PATH: root,
    WORKDIR_01_READ_ONLY: "false",
    SERVERFS_LOG_LEVEL: "ERROR"
  }
})

/** serverfs-mcp with binary transfer on and the largest response budget (the binary suite). */
export const serverfsBinaryLaunch = (root: string): ServerLaunch => ({
  ...serverfsMutationLaunch(root),
  env: {
    ...serverfsMutationLaunch(root).env,
    WORKDIR_01_BINARY_TRANSFER_ENABLED: "true",
    SERVERFS_MAX_RESPONSE_BYTES: String(6 * 1024 * 1024)
  }
})

/** serverfs-bridge: the `bin` of the workspace package @serverfs/bridge, or SERVERFS_BRIDGE_MAIN. */
export const bridgeEntry = (): string =>
  existing(
    process.env.SERVERFS_BRIDGE_MAIN ??
      binOf("@serverfs/bridge", [], "run npm install at the repository root"),
    "build first: npx tsc -b tsconfig.build.json"
  )

/** serverfs-mcp with the agent tools on, talking to the bridge configured by `env`. */
export const serverfsAgentLaunch = (env: Readonly<Record<string, string>>): ServerLaunch => ({
  label: "ServerFS",
  command: process.execPath,
  args: [...profileArgs(), serverfsEntry()],
  env: { ...env }
})

/** The reference server with the tree as its only allowed directory. */
export const serverFilesystemLaunch = (root: string): ServerLaunch => ({
  label: "server-filesystem",
  command: process.execPath,
  args: [serverFilesystemEntry(), root],
  env: {}
})
