import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Absolute paths of the repository's shipped entry points (tests run the real processes): the
 * bundles `npm run build` makes (scripts/bundle.mjs), the files `bin` and the docs start. The
 * test run's global setup (scripts/vitest-bundles.mjs) rebuilds them when dist/ is newer.
 */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
export const mcpMain = path.join(repoRoot, "apps/mcp/dist/bundle/serverfs-mcp.js")
export const cliMain = path.join(repoRoot, "apps/cli/dist/bundle/serverfs.js")
export const bridgeMain = path.join(repoRoot, "apps/bridge/dist/bundle/serverfs-bridge.js")
