import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./RepoPaths.js"

/**
 * An isolated, offline environment for the real Claude Code CLI (shared/reference/
 * claude-agent-sdk-offline.md "Environment that works offline"): HOME, CLAUDE_CONFIG_DIR, TMPDIR
 * and XDG_* under one temp dir, the API pointed at a loopback fake with a fake key, and the
 * nonessential traffic (telemetry, update checks, title generation) switched off. Nothing from
 * the developer's own ~/.claude is read or written.
 */
export interface ClaudeSandbox {
  readonly base: string
  readonly home: string
  /** CLAUDE_CONFIG_DIR: user settings.json, .claude.json, projects/<cwd>/<session>.jsonl. */
  readonly configDir: string
  readonly tmpDir: string
  /** The environment the CLI (or a bridge that passes its environment on) runs with. */
  readonly env: Record<string, string>
  /** The user settings file ($CLAUDE_CONFIG_DIR/settings.json). */
  readonly userSettings: string
  /** Mark `dir` as a trusted workspace (so its project settings apply, as after the trust dialog). */
  readonly trust: (dir: string) => void
  /** Delete the sandbox (retrying while a CLI that just exited still flushes files into it). */
  readonly remove: () => void
}

/** The Claude Code binary the Agent SDK ships (the administrator may select any other). */
export const bundledClaudeBinary = (): string => {
  const candidates = [`linux-${process.arch}`, `linux-${process.arch}-musl`].map((suffix) =>
    path.join(repoRoot, "node_modules", "@anthropic-ai", `claude-agent-sdk-${suffix}`, "claude")
  )
  const found = candidates.find((p) => fs.existsSync(p))
  if (found === undefined) throw new Error("the Agent SDK's Claude Code binary is not installed")
  return found
}

export const makeClaudeSandbox = (apiBaseUrl: string, prefix = "sfc-"): ClaudeSandbox => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const home = path.join(base, "home")
  const configDir = path.join(home, ".claude")
  const tmpDir = path.join(base, "tmp")
  const xdg = (name: string) => path.join(base, "xdg", name)
  for (const dir of [home, configDir, tmpDir, xdg("config"), xdg("cache"), xdg("data"), xdg("state")]) {
    fs.mkdirSync(dir, { recursive: true })
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    CLAUDE_CONFIG_DIR: configDir,
    TMPDIR: tmpDir,
    XDG_CONFIG_HOME: xdg("config"),
    XDG_CACHE_HOME: xdg("cache"),
    XDG_DATA_HOME: xdg("data"),
    XDG_STATE_HOME: xdg("state"),
    ANTHROPIC_BASE_URL: apiBaseUrl,
    ANTHROPIC_API_KEY: "sk-ant-fake-key-for-offline-tests",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1"
  }
  const stateFile = path.join(configDir, ".claude.json")
  return {
    base,
    home,
    configDir,
    tmpDir,
    env,
    userSettings: path.join(configDir, "settings.json"),
    trust: (dir) => {
      const current = fs.existsSync(stateFile)
        ? (JSON.parse(fs.readFileSync(stateFile, "utf8")) as Record<string, unknown>)
        : {}
      const projects = (current.projects ?? {}) as Record<string, Record<string, unknown>>
      projects[dir] = { ...(projects[dir] ?? {}), hasTrustDialogAccepted: true }
      fs.writeFileSync(stateFile, JSON.stringify({ ...current, projects }, null, 2))
    },
    remove: () => fs.rmSync(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })
  }
}

/** A file's bytes, or undefined when it does not exist (to prove settings files untouched). */
export const fileBytes = (file: string): Buffer | undefined =>
  fs.existsSync(file) ? fs.readFileSync(file) : undefined
