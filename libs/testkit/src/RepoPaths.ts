import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** Absolute paths of the repository's built entry points (tests run the real processes). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
export const mcpMain = path.join(repoRoot, "apps/mcp/dist/main.js")
export const cliMain = path.join(repoRoot, "apps/cli/dist/main.js")
export const bridgeMain = path.join(repoRoot, "apps/bridge/dist/main.js")
