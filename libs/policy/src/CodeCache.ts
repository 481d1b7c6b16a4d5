import { isAscii } from "node:buffer"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { constants, Script } from "node:vm"

/**
 * Runs a CommonJS bundle with V8's code cache (docs/performance.md, "Cold start"): the program's
 * functions compiled at build time, read from `<bundle>.cache` next to it, instead of parsed and
 * compiled at every start. Node 20 offers no compile cache for ES modules, so serverfs-mcp's
 * server is also bundled as CommonJS (scripts/bundle.mjs) and run through this.
 *
 * The cache is as trusted as the bundle beside it (both are build output in the install). V8
 * checks it against the source, its own version and flags; a missing or rejected cache only
 * means the source is compiled as usual. The cache is written by the build's warm-up run
 * (scripts/code-cache.mjs), never by a serving process. Reached as `@serverfs/policy/CodeCache`.
 *
 * The file holds the module already inside CommonJS's wrapper (`MODULE_WRAPPER_START` …
 * `MODULE_WRAPPER_END`, written so by the build), and an ASCII file is read as Latin-1: V8 then
 * compiles the text as read. Wrapping it here, or decoding it as UTF-8, made two more copies of
 * a 1.9 MB source on every start, and on the machines we measure each fresh page costs ~15 µs
 * (docs/performance.md, "Cold start is memory touched").
 */
export interface CodeCacheOptions {
  /** The build's warm-up run: write the cache when the process exits (the functions it ran). */
  readonly writeOnExit?: boolean
}

/** CommonJS's module wrapper (Node's `Module.wrap`, which ES modules cannot import by name). */
export const MODULE_WRAPPER_START = "(function (exports, require, module, __filename, __dirname) { "
export const MODULE_WRAPPER_END = "\n});"

/**
 * The file's text as V8 will compile it. Latin-1 and ASCII agree on ASCII bytes, and Node makes a
 * large Latin-1 string external (one copy, outside the heap); any other byte is decoded as UTF-8.
 */
const sourceOf = (file: string): string => {
  const bytes = fs.readFileSync(file)
  return isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8")
}

const readCache = (file: string): Buffer | undefined => {
  try {
    return fs.readFileSync(`${file}.cache`)
  } catch {
    return undefined
  }
}

/** Whether the run used a cache: none was there, V8 refused it, or V8 took it. */
export type CodeCacheUse = "absent" | "rejected" | "used"

export const runCommonJsBundle = (url: URL, options: CodeCacheOptions = {}): CodeCacheUse => {
  const file = fileURLToPath(url)
  const cachedData = options.writeOnExit ? undefined : readCache(file)
  const source = sourceOf(file)
  if (!source.startsWith(MODULE_WRAPPER_START) || !source.endsWith(MODULE_WRAPPER_END))
    throw new Error(`${path.basename(file)} is not a wrapped CommonJS bundle (scripts/bundle.mjs writes one)`)
  const script = new Script(source, {
    filename: file,
    cachedData,
    // The bundle has no import() of its own; anything else goes to Node's loader as usual.
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
  })
  if (options.writeOnExit)
    process.once("exit", () => fs.writeFileSync(`${file}.cache`, script.createCachedData()))
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file))
  return cachedData === undefined ? "absent" : script.cachedDataRejected === true ? "rejected" : "used"
}
