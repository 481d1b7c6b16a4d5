#!/usr/bin/env node
// Builds build/Release/serverfs_posix.node with node-gyp, using ONLY the
// headers installed next to the running node binary.
//
// Why: left to itself node-gyp downloads a header tarball from nodejs.org
// when it cannot find local headers. Build machines here have no internet,
// and an unpinned download at install time is a supply-chain hole, so we
// point node-gyp at <prefix>/include/node explicitly and fail loudly if those
// headers are missing instead of letting it fetch anything.
//
// Runs both as this workspace's npm "install" script (cwd = libs/posix, under
// `npm ci` at the repo root) and by hand (`node scripts/build-native.mjs`).

import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const require = createRequire(path.join(packageDir, "package.json"))

function fail(message) {
  process.stderr.write(`@serverfs/posix: ${message}\n`)
  process.exit(1)
}

const prefix = path.dirname(path.dirname(process.execPath))
const versionHeader = path.join(prefix, "include", "node", "node_version.h")
const apiHeader = path.join(prefix, "include", "node", "node_api.h")
if (!existsSync(versionHeader) || !existsSync(apiHeader)) {
  fail(
    `Node headers not found under ${path.join(prefix, "include", "node")} ` +
      `(needed: node_version.h, node_api.h). Refusing to let node-gyp download them; ` +
      `install the headers for ${process.version} (e.g. the distro's nodejs dev package or the ` +
      `official tarball, which ships include/node) and re-run.`
  )
}

let nodeGypBin
try {
  nodeGypBin = require.resolve("node-gyp/bin/node-gyp.js")
} catch {
  fail("node-gyp is not installed (it is a dependency of @serverfs/posix; run npm ci first).")
}

// Both spellings, because npm passes config to node-gyp through the env and
// a stale npm_config_nodedir / devdir from the caller's environment must not
// win over the local headers.
const env = {
  ...process.env,
  npm_config_nodedir: prefix,
  npm_config_node_gyp_nodedir: prefix,
  npm_package_config_node_gyp_nodedir: prefix
}
// A --tarball / --dist-url config would also make node-gyp fetch; drop them.
for (const key of Object.keys(env)) {
  if (/^npm_(package_config_node_gyp|config)_(tarball|dist_url|disturl)$/i.test(key)) delete env[key]
}

const jobs = Math.max(1, os.availableParallelism?.() ?? os.cpus().length)
const started = Date.now()
const result = spawnSync(
  process.execPath,
  [nodeGypBin, "rebuild", `--nodedir=${prefix}`, `--jobs=${jobs}`, "--loglevel=warn"],
  { cwd: packageDir, env, stdio: "inherit" }
)
if (result.error) fail(`could not run node-gyp: ${result.error.message}`)
if (result.status !== 0) fail(`node-gyp rebuild failed (exit ${result.status ?? result.signal}).`)

const output = path.join(packageDir, "build", "Release", "serverfs_posix.node")
if (!existsSync(output)) fail(`node-gyp succeeded but ${output} is missing.`)
process.stdout.write(
  `@serverfs/posix: built ${path.relative(packageDir, output)} in ${((Date.now() - started) / 1000).toFixed(1)}s\n`
)
