import * as fs from "node:fs"
import * as path from "node:path"
import { Random } from "./Random.js"

/**
 * The deterministic tree every contender works on: nested directories of source-like text files
 * of log-uniform sizes (a long tail of large files), with two planted facts:
 * - `RARE_TOKEN` on one line of exactly `rareCount` files spread across the tree, so a
 *   limit-100 search stops early but only after walking a good part of it;
 * - `ABSENT_QUERY`, which no file contains, so a search for it scans everything.
 * A handful of `.snap` files give find_files a pattern that matches few names (the walk is full).
 *
 * The tree is written once per (seed, files) and reused while its manifest matches.
 */
export const RARE_TOKEN = "BENCH_RARE_TOKEN_4b1d"
export const ABSENT_QUERY = "zqx_absent_needle_9e07"
export const FIND_EXTENSION = "snap"

export interface TreeSpec {
  readonly seed: number
  readonly files: number
  readonly rareCount: number
  readonly findCount: number
}

export interface Tree {
  readonly root: string
  readonly spec: TreeSpec
  readonly files: number
  readonly directories: number
  readonly bytes: number
  readonly rareToken: string
  readonly absentQuery: string
  readonly findPattern: string
  /** Text files of 1–16 KiB and at most 400 lines (one page for every contender). */
  readonly readTargets: ReadonlyArray<string>
  readonly statTargets: ReadonlyArray<string>
  /** Directories with 30–100 entries (one page for every contender). */
  readonly listTargets: ReadonlyArray<string>
  readonly generatedInMs: number
}

const MANIFEST_VERSION = 1

const WORDS = (
  "alpha beta gamma delta value index count total result buffer stream reader writer parse " +
  "format render update create delete insert select filter map reduce apply merge split join " +
  "config option setting default handler callback promise future task queue worker thread " +
  "client server request response header body status error warning message logger event " +
  "state store cache entry record field column table schema model view controller route " +
  "path file folder name size offset limit page cursor token session user account group " +
  "module package import export return async await yield const let function class interface " +
  "type string number boolean array object null undefined true false public private static " +
  "build test check lint bundle deploy release version commit branch merge rebase tag " +
  "network socket packet frame channel signal timer clock date time zone locale region " +
  "render layout style color border margin padding width height font weight theme"
).split(" ")

const EXTENSIONS: ReadonlyArray<readonly [string, number]> = [
  ["ts", 30],
  ["js", 10],
  ["md", 10],
  ["json", 8],
  ["py", 10],
  ["go", 8],
  ["txt", 6],
  ["css", 5],
  ["html", 5],
  ["yaml", 8]
]
const EXTENSION_TABLE = EXTENSIONS.flatMap(([ext, weight]) => Array<string>(weight).fill(ext))

const identifier = (rng: Random): string => {
  const a = rng.pick(WORDS)
  const b = rng.pick(WORDS)
  return a + b.charAt(0).toUpperCase() + b.slice(1)
}

const sentence = (rng: Random, words: number): string =>
  Array.from({ length: words }, () => rng.pick(WORDS)).join(" ")

/** One line of plausible source or prose (never containing RARE_TOKEN or ABSENT_QUERY). */
const makeLine = (rng: Random): string => {
  const indent = "  ".repeat(rng.int(0, 4))
  switch (rng.int(0, 9)) {
    case 0:
      return ""
    case 1:
      return `${indent}// ${sentence(rng, rng.int(3, 12))}`
    case 2:
      return `import { ${identifier(rng)}, ${identifier(rng)} } from "./${rng.pick(WORDS)}/${identifier(rng)}.js"`
    case 3:
      return `${indent}const ${identifier(rng)} = ${identifier(rng)}(${identifier(rng)}, ${rng.int(0, 9999)})`
    case 4:
      return `${indent}if (${identifier(rng)}.${rng.pick(WORDS)} > ${rng.int(0, 512)}) return ${identifier(rng)}`
    case 5:
      return `${indent}"${rng.pick(WORDS)}_${rng.pick(WORDS)}": "${sentence(rng, rng.int(1, 4))}",`
    case 6:
      return `${indent}export function ${identifier(rng)}(${identifier(rng)}: ${rng.pick(WORDS)}): ${rng.pick(WORDS)} {`
    case 7:
      return `${indent}}`
    case 8:
      return sentence(rng, rng.int(6, 20)).replace(/^./, (c) => c.toUpperCase()) + "."
    default:
      return `${indent}${identifier(rng)}.${identifier(rng)}(${rng.int(0, 99)}, "${rng.pick(WORDS)}")`
  }
}

interface PlannedFile {
  readonly relative: string
  readonly size: number
}

interface PlannedDirectory {
  readonly relative: string
  readonly depth: number
  entries: number
}

const manifestPath = (root: string): string => `${root}.manifest.json`

const readManifest = (root: string, spec: TreeSpec): Tree | undefined => {
  try {
    const manifest = JSON.parse(fs.readFileSync(manifestPath(root), "utf8")) as {
      version: number
      tree: Tree
    }
    const same =
      manifest.version === MANIFEST_VERSION &&
      manifest.tree.spec.seed === spec.seed &&
      manifest.tree.spec.files === spec.files &&
      manifest.tree.spec.rareCount === spec.rareCount &&
      manifest.tree.spec.findCount === spec.findCount &&
      fs.statSync(root).isDirectory()
    return same ? { ...manifest.tree, generatedInMs: 0 } : undefined
  } catch {
    return undefined
  }
}

/** Lay out directories breadth-first until they hold `spec.files` files. */
const plan = (rng: Random, spec: TreeSpec): { dirs: PlannedDirectory[]; files: PlannedFile[] } => {
  const dirs: PlannedDirectory[] = [{ relative: "", depth: 0, entries: 0 }]
  const files: PlannedFile[] = []
  for (let d = 0; files.length < spec.files; d++) {
    const dir = dirs[d]
    if (dir === undefined) throw new Error("tree plan ran out of directories")
    const used = new Set<string>()
    const unique = (base: string): string => {
      let name = base
      for (let i = 2; used.has(name); i++) name = `${base}${i}`
      used.add(name)
      return name
    }
    const join = (name: string) => (dir.relative === "" ? name : `${dir.relative}/${name}`)
    const subdirs = dir.depth === 0 ? 14 : dir.depth >= 6 ? 0 : rng.int(0, 4)
    for (let i = 0; i < subdirs; i++) {
      dirs.push({ relative: join(unique(rng.pick(WORDS))), depth: dir.depth + 1, entries: 0 })
    }
    const fileCount = Math.min(dir.depth === 0 ? 6 : rng.logInt(3, 110), spec.files - files.length)
    for (let i = 0; i < fileCount; i++) {
      const name = unique(identifier(rng))
      const size = rng.next() < 0.004 ? rng.logInt(65_536, 1_048_576) : rng.logInt(100, 32_000)
      files.push({ relative: join(`${name}.${rng.pick(EXTENSION_TABLE)}`), size })
    }
    dir.entries = subdirs + fileCount
  }
  return { dirs, files }
}

export const generateTree = (root: string, spec: TreeSpec): Tree => {
  const existing = readManifest(root, spec)
  if (existing !== undefined) return existing
  const started = performance.now()
  fs.rmSync(manifestPath(root), { force: true })
  fs.rmSync(root, { recursive: true, force: true })

  const rng = new Random(spec.seed)
  const pool = Array.from({ length: 50_000 }, () => makeLine(rng))
  const { dirs, files: planned } = plan(rng, spec)

  // Plant the rare token and the find_files extension on distinct, evenly drawn files.
  const rare = new Set(rng.sample(planned.length, spec.rareCount))
  const snapIndices = new Set(rng.sample(planned.length, spec.findCount))
  const files = planned.map((f, i) =>
    snapIndices.has(i) ? { ...f, relative: f.relative.replace(/\.[a-z]+$/, `.${FIND_EXTENSION}`) } : f
  )

  for (const dir of dirs) fs.mkdirSync(path.join(root, dir.relative), { recursive: true })
  let bytes = 0
  const lineCounts: number[] = []
  files.forEach((file, i) => {
    const lines: string[] = []
    let size = 0
    while (size < file.size) {
      const line = pool[Math.floor(rng.next() * pool.length)]!
      lines.push(line)
      size += line.length + 1
    }
    if (rare.has(i)) {
      lines.splice(rng.int(0, lines.length), 0, `  // ${RARE_TOKEN}: planted match ${i}`)
    }
    const text = lines.join("\n") + "\n"
    fs.writeFileSync(path.join(root, file.relative), text)
    bytes += Buffer.byteLength(text)
    lineCounts.push(lines.length)
  })

  const shuffled = files.map((_, i) => ({ i, r: rng.next() })).sort((a, b) => a.r - b.r)
  const readTargets = shuffled
    .filter(({ i }) => files[i]!.size >= 1024 && files[i]!.size <= 16_384 && lineCounts[i]! <= 400)
    .slice(0, 32)
    .map(({ i }) => files[i]!.relative)
  const statTargets = shuffled.slice(0, 64).map(({ i }) => files[i]!.relative)
  const listTargets = dirs
    .filter((d) => d.entries >= 30 && d.entries <= 100)
    .slice(0, 16)
    .map((d) => d.relative)

  const tree: Tree = {
    root,
    spec,
    files: files.length,
    directories: dirs.length,
    bytes,
    rareToken: RARE_TOKEN,
    absentQuery: ABSENT_QUERY,
    findPattern: `*.${FIND_EXTENSION}`,
    readTargets,
    statTargets,
    listTargets,
    generatedInMs: performance.now() - started
  }
  const temporary = `${manifestPath(root)}.partial`
  fs.writeFileSync(temporary, JSON.stringify({ version: MANIFEST_VERSION, tree }, null, 2))
  fs.renameSync(temporary, manifestPath(root))
  return tree
}
