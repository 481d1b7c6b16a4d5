// The embedded default configuration: examples/demo-workdir served read-only as "demo".
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const demoEnv = {
  WORKDIR_01_ALIAS: "demo",
  WORKDIR_01_PATH: path.join(root, "examples/demo-workdir"),
  WORKDIR_01_DESCRIPTION: "The ServerFS demo workdir (read-only)",
  SERVERFS_LOG_LEVEL: process.env.SERVERFS_LOG_LEVEL ?? "WARNING"
}
