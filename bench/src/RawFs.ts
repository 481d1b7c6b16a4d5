import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The raw calls a tool result is made of, in this process with no protocol at all: the floor
 * below which no server can go. They are synchronous, like the server's own descriptor calls.
 */
export const rawReadText = (root: string, relative: string): string =>
  fs.readFileSync(path.join(root, relative), "utf8")

export const rawStat = (root: string, relative: string): fs.Stats => fs.statSync(path.join(root, relative))

/** One directory listing with what list_directory returns per entry: name, type, size, mtime. */
export const rawList = (
  root: string,
  relative: string
): Array<{ name: string; directory: boolean; size: number; mtimeMs: number }> => {
  const dir = path.join(root, relative)
  return fs.readdirSync(dir, { withFileTypes: true }).map((entry) => {
    const stat = fs.lstatSync(path.join(dir, entry.name))
    return { name: entry.name, directory: entry.isDirectory(), size: stat.size, mtimeMs: stat.mtimeMs }
  })
}
