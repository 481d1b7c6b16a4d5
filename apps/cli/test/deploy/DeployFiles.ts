import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { repoRoot } from "@serverfs/testkit"

/** The deployment files under docs/deploy, read as the tests see them. */
export const deployDir = path.join(repoRoot, "docs/deploy")

export const unitNames = ["serverfs-bridge.service", "serverfs-mcp-http.service"] as const

/** The drop-in directory of a unit (`<unit>.d`), with its `.conf` files in load order. */
export const dropInsOf = (unit: string): ReadonlyArray<string> => {
  const dir = path.join(deployDir, `${unit}.d`)
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith(".conf"))
      .sort()
      .map((name) => path.join(`${unit}.d`, name))
  } catch {
    return []
  }
}

export interface UnitSetting {
  readonly file: string
  readonly section: string
  readonly key: string
  readonly value: string
}

/**
 * The settings of a unit file and its drop-ins (plus optional ones, paths relative to
 * docs/deploy), in the order systemd applies them. Enough of
 * systemd.syntax(7) for our own files: sections, `Key=value`, `#`/`;` comments; our files use no
 * line continuations (checked: a trailing backslash is reported as a setting named "\\").
 */
export const settingsOf = (
  unit: string,
  extraDropIns: ReadonlyArray<string> = []
): ReadonlyArray<UnitSetting> =>
  [unit, ...dropInsOf(unit), ...extraDropIns].flatMap((file) => {
    let section = ""
    return readFileSync(path.join(deployDir, file), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#") && !line.startsWith(";"))
      .flatMap((line): ReadonlyArray<UnitSetting> => {
        if (line.startsWith("[") && line.endsWith("]")) {
          section = line.slice(1, -1)
          return []
        }
        if (line.endsWith("\\")) return [{ file, section, key: "\\", value: line }]
        const at = line.indexOf("=")
        return [{ file, section, key: line.slice(0, at).trim(), value: line.slice(at + 1).trim() }]
      })
  })

/** The last value of a key in a section (systemd's "last assignment wins" for scalar settings). */
export const lastValue = (settings: ReadonlyArray<UnitSetting>, section: string, key: string) =>
  settings.filter((s) => s.section === section && s.key === key).at(-1)?.value

/** The example environment files and what reads them. */
export const envExamples = {
  shared: path.join(deployDir, "serverfs.env.example"),
  http: path.join(deployDir, "mcp-http.env.example")
} as const
