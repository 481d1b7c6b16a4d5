import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Vitest global setup: the integration tests start the shipped bundles (apps/<app>/dist/bundle,
 * libs/testkit RepoPaths.ts). After a `tsc -b` the bundles would lag behind dist/, so they are
 * rebuilt first when any file they were built from is newer (scripts/bundle.mjs --if-stale).
 */
export default function setup() {
  const script = join(dirname(fileURLToPath(import.meta.url)), "bundle.mjs")
  const result = spawnSync(process.execPath, [script, "--if-stale"], { stdio: "inherit" })
  if (result.status !== 0) throw new Error("scripts/bundle.mjs failed: run npm run build")
}
