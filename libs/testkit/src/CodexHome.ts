import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./RepoPaths.js"

/**
 * A fresh CODEX_HOME for the real Codex CLI pointed at a fake Responses server
 * (codex-app-server-offline §2): model gpt-5.5 (a catalog slug, so the real tool set incl.
 * freeform apply_patch), the loopback provider `fake` without an API key, no retries (an HTTP
 * 500 fails at once), on-request approvals in a workspace-write sandbox, and the
 * request_permissions tool enabled; /tmp is not writable by default (see below). Codex writes into it (sessions, sqlite, trust entries):
 * never share one between test files.
 */
export const codexBin = path.join(repoRoot, "node_modules/.bin/codex")

export interface CodexHomeOptions {
  /** The fake server's base URL (`http://127.0.0.1:<port>/v1`). */
  readonly baseUrl: string
  /** Parent directory (default: a new temp dir). */
  readonly parent?: string
  readonly approvalPolicy?: "on-request" | "never" | "on-failure"
  /**
   * The model slug (default gpt-5.5, in the bundled catalog: the full tool set). An unknown slug
   * gets default metadata: no apply_patch, no tool_search (MCP tools are then offered directly).
   */
  readonly model?: string
  /** Extra `[features]` switches (request_permissions_tool is always on). */
  readonly features?: Readonly<Record<string, boolean>>
  /** Extra TOML appended verbatim. */
  readonly extraToml?: string
}

export interface CodexHome {
  readonly path: string
  readonly configPath: string
  readonly remove: () => void
}

const codexConfigToml = (options: CodexHomeOptions): string =>
  [
    "suppress_unstable_features_warning = true",
    `model = "${options.model ?? "gpt-5.5"}"`,
    'model_provider = "fake"',
    `approval_policy = "${options.approvalPolicy ?? "on-request"}"`,
    'sandbox_mode = "workspace-write"',
    "",
    "[model_providers.fake]",
    'name = "Fake local Responses server"',
    `base_url = "${options.baseUrl}"`,
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "stream_idle_timeout_ms = 20000",
    "",
    "[features]",
    "request_permissions_tool = true",
    ...Object.entries(options.features ?? {}).map(([name, on]) => `${name} = ${on}`),
    "",
    // /tmp and $TMPDIR stay outside the writable roots, so that a write outside the workdir (all
    // test directories live under /tmp) needs an approval, as it would on a real server.
    "[sandbox_workspace_write]",
    "exclude_slash_tmp = true",
    "exclude_tmpdir_env_var = true",
    "",
    options.extraToml ?? ""
  ].join("\n")

export const makeCodexHome = (options: CodexHomeOptions): CodexHome => {
  const parent = options.parent ?? fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-codex-"))
  const home = path.join(parent, "codex-home")
  fs.mkdirSync(home, { recursive: true, mode: 0o700 })
  const configPath = path.join(home, "config.toml")
  fs.writeFileSync(configPath, codexConfigToml(options))
  return {
    path: home,
    configPath,
    remove: () => fs.rmSync(options.parent === undefined ? parent : home, { recursive: true, force: true })
  }
}
