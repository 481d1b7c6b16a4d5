#!/usr/bin/env node
/**
 * Bundles the three programs after `tsc -b` (npm run build): each app's dist/main.js and the
 * modules it imports (the workspace's dist and the pure-JS dependencies) become one ES module,
 * apps/<app>/dist/bundle/<program>.js, which is what `bin`, the docs and the tests start. Why: Node's ESM
 * loader pays per module (resolution, a read, a compile), and the unbundled server loads ~1,000
 * of them — most of its cold start (docs/performance.md, "Cold start and memory (issue 12)").
 *
 * Kept external (resolved from node_modules at run time): better-sqlite3 (a native addon) and the packages that find files next to their own module (the Claude Agent
 * SDK resolves its CLI that way). Dynamic imports stay dynamic (code splitting), so what a
 * configuration does not use (the HTTP transport, the agent adapters) is not loaded at start.
 *
 * `createRequire(import.meta.url)("../package.json")` reads a file relative to the module that
 * says it; in a bundle import.meta.url is the bundle's, so those calls are inlined at build time
 * (the plugin below) with the file their own module meant.
 */
import { isAscii } from "node:buffer"
import { chmod, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"
import { warmCodeCache } from "./code-cache.mjs"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const { MODULE_WRAPPER_START, MODULE_WRAPPER_END } = await import(
  pathToFileURL(join(root, "libs", "policy", "dist", "CodeCache.js")).href
)

/** Where each app's bundle goes, under its own dist (built output, not committed). */
const OUT = "dist/bundle"

const programs = [
  {
    app: "mcp",
    entries: { "serverfs-mcp": "dist/main.js", fetcher: "dist/ingress/fetcher.js" },
    // The server behind the entry, as CommonJS run with V8's code cache (see serverAsCommonJs).
    commonJs: { entry: "dist/Server.js", importer: "dist/main.js", name: "serverfs-mcp-server" }
  },
  { app: "bridge", entries: { "serverfs-bridge": "dist/main.js" } },
  { app: "cli", entries: { serverfs: "dist/main.js" } }
]

const external = ["better-sqlite3", "@anthropic-ai/claude-agent-sdk", "ws", "bufferutil", "utf-8-validate"]

const createRequireJson = /createRequire\(import\.meta\.url\)\(("\.{1,2}\/[^"]+\.json")\)/g

/** Inlines `createRequire(import.meta.url)("./x.json")` as the JSON its own module meant. */
const inlineRelativeJson = {
  name: "inline-relative-json",
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, async (args) => {
      const source = await readFile(args.path, "utf8")
      // An entry's hashbang has to stay the first line (esbuild keeps it first in the bundle).
      const hashbang = /^#!.*\n/.exec(source)?.[0] ?? ""
      const text = source.slice(hashbang.length)
      if (!text.includes("createRequire(import.meta.url)(")) return undefined
      const imports = []
      const contents = text.replace(createRequireJson, (_m, spec) => {
        const name = `__serverfs_json_${imports.length}`
        imports.push(`import ${name} from ${spec} with { type: "json" };`)
        return `(${name})`
      })
      return {
        contents: `${hashbang}${imports.join("\n")}\n${contents}`,
        loader: "js",
        resolveDir: dirname(args.path)
      }
    })
  }
}

/**
 * libs/posix loads its addon with `createRequire(import.meta.url)("../build/Release/…node")`.
 * The addon stays where npm ci built it; the bundled module asks for it relative to where its
 * own source module is, from the bundle's directory (apps/<app>/dist/bundle), which keeps the
 * checkout's layout in every install (docs/install.md, deploy/container/make-rootfs.sh).
 */
const posixNative = join(root, "libs", "posix", "dist", "native.js")
const nativeAddon = {
  name: "posix-native-addon",
  setup(b) {
    b.onLoad({ filter: /[\\/]libs[\\/]posix[\\/]dist[\\/]native\.js$/ }, async (args) => {
      const text = await readFile(args.path, "utf8")
      const from = relative(join(root, "apps", "mcp", OUT), posixNative)
        .split(sep)
        .join("/")
      const contents = text.replace(
        "createRequire(import.meta.url)",
        `createRequire(new URL(${JSON.stringify(from)}, import.meta.url))`
      )
      if (contents === text)
        throw new Error("bundle: libs/posix/dist/native.js no longer loads its addon as expected")
      return { contents, loader: "js", resolveDir: dirname(args.path) }
    })
  }
}

/**
 * serverfs-mcp's cold start (docs/performance.md, "Cold start"): Node 20 has no compile cache
 * for ES modules, so the server module the entry imports (dist/Server.js) is bundled a second
 * time as CommonJS, and the entry's `import("./Server.js")` becomes a run of that bundle through
 * libs/policy CodeCache.ts, which reads the functions V8 compiled in the build's warm-up run
 * (scripts/code-cache.mjs). Unbundled (dist/main.js) the entry imports Server.js as written.
 */
const serverAsCommonJs = (appDir, { importer, name }) => ({
  name: "server-as-commonjs",
  setup(b) {
    b.onResolve({ filter: /^\.\/Server\.js$/ }, (args) =>
      args.importer === join(appDir, importer) ? { path: name, namespace: "serverfs-code-cache" } : undefined
    )
    b.onLoad({ filter: /.*/, namespace: "serverfs-code-cache" }, () => ({
      contents: `import { runCommonJsBundle } from "@serverfs/policy/CodeCache"\nrunCommonJsBundle(new URL("./${name}.cjs", import.meta.url))\n`,
      loader: "js",
      resolveDir: join(appDir, "dist")
    }))
  }
})

/**
 * The CommonJS bundle of a server module; `import.meta.url` is the bundle file's own URL. The
 * file is written inside CommonJS's module wrapper, and must be ASCII (esbuild's default
 * charset escapes the rest): CodeCache.ts then compiles it as read, with no copy made to wrap or
 * decode it (docs/performance.md, "Cold start is memory touched").
 */
const buildCommonJs = async (appDir, next, { entry, name }) => {
  const result = await build({
    absWorkingDir: appDir,
    entryPoints: { [name]: join(appDir, entry) },
    outdir: next,
    outExtension: { ".js": ".cjs" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    external,
    plugins: [inlineRelativeJson, nativeAddon],
    define: { "import.meta.url": "__serverfs_import_meta_url" },
    banner: { js: 'var __serverfs_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: true,
    legalComments: "none",
    logLevel: "warning",
    metafile: true
  })
  const file = join(next, `${name}.cjs`)
  const text = await readFile(file)
  if (!isAscii(text)) throw new Error(`bundle: ${name}.cjs is not ASCII; CodeCache.ts reads it as Latin-1`)
  await writeFile(file, `${MODULE_WRAPPER_START}${text.toString("latin1")}${MODULE_WRAPPER_END}`, "latin1")
  return result
}

const INPUTS = "inputs.json"

/** Whether an app's bundle is missing or older than one of the files it was built from. */
const isStale = async (appDir) => {
  try {
    const built = (await stat(join(appDir, OUT, INPUTS))).mtimeMs
    const inputs = JSON.parse(await readFile(join(appDir, OUT, INPUTS), "utf8"))
    for (const file of inputs) if ((await stat(join(appDir, file))).mtimeMs > built) return true
    return false
  } catch {
    return true
  }
}

/** Builds into a fresh directory and swaps it in, so a program started meanwhile never sees half. */
const bundle = async ({ app, entries, commonJs }) => {
  const appDir = join(root, "apps", app)
  const next = join(appDir, `${OUT}.next-${process.pid}`)
  await rm(next, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: appDir,
    entryPoints: Object.fromEntries(
      Object.entries(entries).map(([name, file]) => [name, join(appDir, file)])
    ),
    outdir: next,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external,
    plugins: [inlineRelativeJson, nativeAddon, ...(commonJs ? [serverAsCommonJs(appDir, commonJs)] : [])],
    // Flat, so that every output file is at the same depth (see nativeAddon).
    chunkNames: "[name]-[hash]",
    // A bundled CommonJS dependency calls require() for Node built-ins; ESM has no require.
    banner: {
      js: 'import { createRequire as __serverfsCreateRequire } from "node:module"; const require = __serverfsCreateRequire(import.meta.url);'
    },
    // Less source text to read, parse and keep resident (docs/performance.md, "Cold start is
    // memory touched"). Short identifiers too: nothing reads a function's or class's name (a
    // frozen error's name is its code), so only a stack trace reads differently.
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: true,
    legalComments: "none",
    logLevel: "warning",
    metafile: true
  })
  for (const name of Object.keys(entries)) await chmod(join(next, `${name}.js`), 0o755)
  const commonJsResult = commonJs ? await buildCommonJs(appDir, next, commonJs) : undefined
  const inputs = [
    ...new Set(
      [result, commonJsResult]
        .flatMap((r) => (r ? Object.keys(r.metafile.inputs) : []))
        .filter((f) => !f.startsWith("<") && !f.includes(":"))
    )
  ]
  await writeFile(join(next, INPUTS), `${JSON.stringify(inputs)}\n`)
  const old = join(appDir, `${OUT}.old-${process.pid}`)
  await rename(join(appDir, OUT), old).catch(() => undefined)
  await rename(next, join(appDir, OUT))
  await rm(old, { recursive: true, force: true })
  // Warmed where it is run from: V8 records the file name in the cache's functions.
  if (commonJs) await warmCodeCache(join(appDir, OUT, `${commonJs.name}.cjs`))
  process.stdout.write(`bundle: apps/${app}/${OUT}: ${Object.keys(result.metafile.outputs).length} files\n`)
}

// --if-stale (the test run's global setup): only the apps whose bundle is older than its inputs.
const onlyStale = process.argv.includes("--if-stale")
for (const program of programs) {
  if (onlyStale && !(await isStale(join(root, "apps", program.app)))) continue
  await bundle(program)
}
