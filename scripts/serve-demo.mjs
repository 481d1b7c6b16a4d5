#!/usr/bin/env node
// The MCP server on stdio over the embedded demo workdir, for connecting any MCP client by hand.
// Give the client `node scripts/serve-demo.mjs` (or `npm run --silent serve:demo`): only protocol
// frames appear on stdout — a plain `npm run` prints its banner there first.
import { spawn } from "node:child_process"
import * as path from "node:path"
import { demoEnv, root } from "./demo-env.mjs"

const child = spawn(process.execPath, [path.join(root, "apps/mcp/dist/bundle/serverfs-mcp.js")], {
  env: { ...process.env, ...demoEnv },
  stdio: "inherit"
})
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code) => process.exit(code ?? 1))
