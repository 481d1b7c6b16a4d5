#!/usr/bin/env node
// `npm run serve:demo`: the MCP server on stdio over the embedded demo workdir, for connecting
// any MCP client by hand. Only protocol frames appear on stdout.
import { spawn } from "node:child_process"
import * as path from "node:path"
import { demoEnv, root } from "./demo-env.mjs"

const child = spawn(process.execPath, [path.join(root, "apps/mcp/dist/main.js")], {
  env: { ...process.env, ...demoEnv },
  stdio: "inherit"
})
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code) => process.exit(code ?? 1))
