/**
 * What a Claude Write would replace is read only through the workdir-safe path (openat2 beneath
 * the root, no symlink anywhere, a regular file, bounded): anything else is `unknown`.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { hasOpenat2 } from "@serverfs/posix"
import { makeTempTree, type TempTree } from "@serverfs/testkit"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { CURRENT_FILE_MAX_BYTES, readCurrentFile } from "../../src/claude/ClaudeCurrentFile.js"

let tree: TempTree

beforeEach(() => {
  tree = makeTempTree("sfc-current-")
})

afterEach(() => {
  tree.remove()
})

describe.skipIf(!hasOpenat2)("readCurrentFile", () => {
  it("a regular file's text; a missing one is missing", () => {
    fs.mkdirSync(path.join(tree.root, "src"))
    fs.writeFileSync(path.join(tree.root, "src/a.txt"), "hello\n")
    expect(readCurrentFile(tree.root, path.join(tree.root, "src/a.txt"))).toEqual({
      _tag: "text",
      text: "hello\n"
    })
    expect(readCurrentFile(tree.root, "src/a.txt")).toEqual({ _tag: "text", text: "hello\n" })
    expect(readCurrentFile(tree.root, path.join(tree.root, "src/none.txt"))).toEqual({ _tag: "missing" })
  })

  it("never follows a symlink (final or on the way) and never reads outside the workdir", () => {
    fs.writeFileSync(path.join(tree.outside, "secret.txt"), "secret\n")
    fs.symlinkSync(path.join(tree.outside, "secret.txt"), path.join(tree.root, "link.txt"))
    fs.symlinkSync(tree.outside, path.join(tree.root, "dir"))
    expect(readCurrentFile(tree.root, path.join(tree.root, "link.txt"))).toEqual({ _tag: "unknown" })
    expect(readCurrentFile(tree.root, path.join(tree.root, "dir/secret.txt"))).toEqual({ _tag: "unknown" })
    expect(readCurrentFile(tree.root, path.join(tree.outside, "secret.txt"))).toEqual({ _tag: "unknown" })
    expect(readCurrentFile(tree.root, path.join(tree.root, "../outside/secret.txt"))).toEqual({
      _tag: "unknown"
    })
  })

  it("a FIFO does not block; a directory and an over-large file are not read", () => {
    execFileSync("mkfifo", [path.join(tree.root, "pipe")])
    fs.mkdirSync(path.join(tree.root, "d"))
    fs.writeFileSync(path.join(tree.root, "large.txt"), Buffer.alloc(CURRENT_FILE_MAX_BYTES + 1, 0x61))
    expect(readCurrentFile(tree.root, path.join(tree.root, "pipe"))).toEqual({ _tag: "unknown" })
    expect(readCurrentFile(tree.root, path.join(tree.root, "d"))).toEqual({ _tag: "unknown" })
    expect(readCurrentFile(tree.root, path.join(tree.root, "large.txt"))).toEqual({ _tag: "unknown" })
  })
})
