import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Context, Effect, Layer, type Scope } from "effect"

/**
 * A throwaway directory tree for tests. `root` is the workdir a test configures; `outside` is a
 * sibling for escape attempts (including the `<root>_evil` sibling-prefix case).
 */
export interface TempTree {
  readonly base: string
  readonly root: string
  readonly outside: string
  readonly file: (relative: string, content: string | Buffer) => string
  readonly dir: (relative: string) => string
  readonly symlink: (relative: string, target: string) => string
  readonly remove: () => void
}

export const makeTempTree = (prefix = "serverfs-test-"): TempTree => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const root = path.join(base, "workdir")
  const outside = path.join(base, "outside")
  fs.mkdirSync(root)
  fs.mkdirSync(outside)
  const at = (relative: string) => path.join(root, relative)
  return {
    base,
    root,
    outside,
    file: (relative, content) => {
      fs.mkdirSync(path.dirname(at(relative)), { recursive: true })
      fs.writeFileSync(at(relative), content)
      return at(relative)
    },
    dir: (relative) => {
      fs.mkdirSync(at(relative), { recursive: true })
      return at(relative)
    },
    symlink: (relative, target) => {
      fs.mkdirSync(path.dirname(at(relative)), { recursive: true })
      fs.symlinkSync(target, at(relative))
      return at(relative)
    },
    remove: () => fs.rmSync(base, { recursive: true, force: true })
  }
}

/**
 * A TempTree that lives as long as the enclosing Scope (`it.scoped`, `Effect.scoped`): removed by
 * the scope's finalizer whatever way the test ends, so no test cleans up by hand.
 */
export const scopedTempTree = (prefix = "serverfs-test-"): Effect.Effect<TempTree, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => makeTempTree(prefix)),
    (tree) => Effect.sync(tree.remove)
  )

/**
 * One TempTree shared by a describe block: `layer(SharedTempTree.layer())("…", (it) => …)` from
 * @effect/vitest builds it before the block's first test and removes it after the last.
 */
export class SharedTempTree extends Context.Tag("@serverfs/testkit/SharedTempTree")<
  SharedTempTree,
  TempTree
>() {
  static readonly layer = (prefix?: string): Layer.Layer<SharedTempTree> =>
    Layer.scoped(SharedTempTree, scopedTempTree(prefix))
}
