#!/usr/bin/env node
import { createRequire } from "node:module"
import { keepHeapSmall } from "@serverfs/policy/HeapTuning"
import { handleProgramArguments } from "@serverfs/policy/ProgramArguments"

/**
 * serverfs-mcp's entry point: it keeps V8's heap small (HeapTuning.ts: the idle
 * server's RSS) before anything else is loaded, decides on the command line, then starts the
 * server (Server.ts), a dynamic import so that the heap flag is set before any of it loads.
 */
keepHeapSmall()
// --help/--version print and exit 0, any other argument exits 2 (`serverfs-mcp /srv/docs` once
// started with zero workdirs): decided before the configuration is read or a frame is served.
// stdout is protocol-only for a running server; these outputs happen only when none starts.
const { version } = createRequire(import.meta.url)("../package.json") as { readonly version: string }
const start = handleProgramArguments({
  name: "serverfs-mcp",
  version,
  description:
    "The ServerFS MCP server: serves the configured workdirs to one MCP client over stdio, or over\nStreamable HTTP with SERVERFS_MCP_TRANSPORT=http (docs/remote-access.md)\n(stdout carries protocol frames only; logs are JSON lines on stderr)."
})

if (start) await import("./Server.js")
