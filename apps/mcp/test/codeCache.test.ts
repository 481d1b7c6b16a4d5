import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { MODULE_WRAPPER_END, MODULE_WRAPPER_START } from "@serverfs/policy/CodeCache"
import { mcpMain, repoRoot } from "@serverfs/testkit"

/**
 * The code cache of serverfs-mcp's CommonJS server bundle (libs/policy CodeCache.ts,
 * scripts/bundle.mjs):
 * each run happens in a fresh Node process, as a program start does, with the heap flag the
 * entry sets first (V8 refuses a cache made under other flags).
 */
const codeCache = pathToFileURL(path.join(repoRoot, "libs/policy/dist/CodeCache.js")).href
const heapTuning = pathToFileURL(path.join(repoRoot, "libs/policy/dist/HeapTuning.js")).href
/** A program as the build writes a bundle: inside CommonJS's module wrapper. */
const wrapped = (source: string) => `${MODULE_WRAPPER_START}${source}${MODULE_WRAPPER_END}`

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-code-cache-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Runs `bundle` in a fresh process; prints what the bundle printed, then the cache use. */
const run = (bundle: string, writeOnExit = false) => {
  const child = start(bundle, writeOnExit)
  expect(child.stderr).toBe("")
  return child.stdout
}

const start = (bundle: string, writeOnExit = false) => {
  const script = `
    const { keepHeapSmall } = await import(${JSON.stringify(heapTuning)})
    const { runCommonJsBundle } = await import(${JSON.stringify(codeCache)})
    keepHeapSmall()
    const use = runCommonJsBundle(new URL(${JSON.stringify(pathToFileURL(bundle).href)}), { writeOnExit: ${writeOnExit} })
    process.stdout.write(" " + use)`
  return spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
}

describe("the code cache of a CommonJS bundle", () => {
  const bundle = path.join(dir, "program.cjs")
  const program =
    'const path = require("node:path")\nconst add = (a, b) => a + b\nprocess.stdout.write([add(2, 3), typeof require, path.basename(__filename)].join(" "))\n'
  fs.writeFileSync(bundle, wrapped(program))

  it("without a cache the bundle runs as CommonJS (require, __filename) and says the cache was absent", () => {
    expect(run(bundle)).toBe("5 function program.cjs absent")
  })

  it("the warm-up run writes the cache on exit, and the next start uses it", () => {
    expect(run(bundle, true)).toBe("5 function program.cjs absent")
    expect(fs.statSync(`${bundle}.cache`).size).toBeGreaterThan(0)
    expect(run(bundle)).toBe("5 function program.cjs used")
  })

  it("a cache that does not fit (another source, or garbage) is refused by V8 and the bundle still runs", () => {
    fs.writeFileSync(`${bundle}.cache`, Buffer.from("not a code cache at all"))
    expect(run(bundle)).toBe("5 function program.cjs rejected")
    fs.writeFileSync(bundle, wrapped(`${program}// changed after the cache was written\n`))
    run(bundle, true)
    fs.writeFileSync(bundle, wrapped(`${program}// and changed again\n`))
    expect(run(bundle)).toBe("5 function program.cjs rejected")
  })

  it("a bundle with other than ASCII in it is read as UTF-8, its text intact", () => {
    const other = path.join(dir, "accents.cjs")
    fs.writeFileSync(other, wrapped('process.stdout.write("d\u00e9j\u00e0 \u2192 " + "déjà →".length)'))
    expect(run(other)).toBe("déjà → 6 absent")
  })

  it("a file that is not a wrapped bundle is refused, naming the file and not its directory", () => {
    const plain = path.join(dir, "plain.cjs")
    fs.writeFileSync(plain, 'process.stdout.write("ran")\n')
    const child = start(plain)
    expect(child.stdout).toBe("")
    expect(child.stderr).toContain("plain.cjs is not a wrapped CommonJS bundle")
    expect(child.stderr).not.toContain(dir)
  })

  it("the shipped serverfs-mcp server bundle has a cache, written by the build's warm-up, that V8 takes", () => {
    const server = path.join(path.dirname(mcpMain), "serverfs-mcp-server.cjs")
    expect(fs.existsSync(`${server}.cache`)).toBe(true)
    // Compiled only (not run): a run would start the server.
    const script = `
      const { keepHeapSmall } = await import(${JSON.stringify(heapTuning)})
      keepHeapSmall()
      const { Script } = await import("node:vm")
      const fs = await import("node:fs")
      const file = ${JSON.stringify(server)}
      const s = new Script(fs.readFileSync(file, "latin1"), { filename: file, cachedData: fs.readFileSync(file + ".cache") })
      process.stdout.write(String(s.cachedDataRejected))`
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
    expect(child.stdout).toBe("false")
  })
})
