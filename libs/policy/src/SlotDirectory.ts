import * as fs from "node:fs"
import * as path from "node:path"
import { DISABLED_SENTINEL } from "./ReservedNames.js"

/**
 * What a slot's WORKDIR_XX_PATH points at, checked once at startup. The administrator owns this
 * path, so plain path-based lstat is right here; every request afterwards goes through the
 * descriptor opened from it.
 */
export type SlotDirectory =
  | { readonly _tag: "relative" }
  /** "." or ".." segments: the symlink check would look at a name the kernel does not resolve. */
  | { readonly _tag: "not-normalized" }
  | { readonly _tag: "missing" }
  | { readonly _tag: "symlink" }
  | { readonly _tag: "not-directory" }
  | { readonly _tag: "unreadable" }
  /** The compose-style placeholder of an unused slot: a directory holding only the sentinel. */
  | { readonly _tag: "placeholder" }
  /** A real directory that also holds the sentinel: refused, the name is ServerFS's own. */
  | { readonly _tag: "sentinel-conflict" }
  | { readonly _tag: "directory" }

export type InspectSlotDirectory = (hostPath: string) => SlotDirectory

export const inspectSlotDirectory: InspectSlotDirectory = (hostPath) => {
  if (!path.isAbsolute(hostPath)) return { _tag: "relative" }
  if (hostPath.split("/").some((segment) => segment === "." || segment === "..")) {
    return { _tag: "not-normalized" }
  }
  let stat: fs.Stats
  try {
    // A trailing "/" or "/." makes lstat follow a final symbolic link: inspect the link itself.
    stat = fs.lstatSync(hostPath.replace(/(?<=.)(\/\.?)+$/, ""))
  } catch (e) {
    // Only a missing entry is "missing"; a permission problem on the way is reported as such.
    const code = (e as NodeJS.ErrnoException).code
    return code === "ENOENT" || code === "ENOTDIR" ? { _tag: "missing" } : { _tag: "unreadable" }
  }
  if (stat.isSymbolicLink()) return { _tag: "symlink" }
  if (!stat.isDirectory()) return { _tag: "not-directory" }
  try {
    fs.lstatSync(path.join(hostPath, DISABLED_SENTINEL))
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { _tag: "directory" }
    return { _tag: "unreadable" }
  }
  try {
    const entries = fs.readdirSync(hostPath)
    return entries.length === 1 ? { _tag: "placeholder" } : { _tag: "sentinel-conflict" }
  } catch {
    return { _tag: "unreadable" }
  }
}
