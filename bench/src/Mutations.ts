import * as fs from "node:fs"
import { type McpSession, structured } from "./McpDriver.js"
import { measure } from "./Measure.js"
import {
  durableCreate,
  durableDelete,
  durableEdit,
  type FsyncTimes,
  plainCreate,
  plainEdit,
  prepareFile,
  RawDirectory
} from "./RawMutations.js"
import type { Measurement, Row } from "./Report.js"
import { type Summary, summarize } from "./Stats.js"

/**
 * Mutation latency: create_text_file, edit_text_file and delete_file of serverfs-mcp against
 * @modelcontextprotocol/server-filesystem's write_file and edit_file (which do not fsync) over
 * the same stdio transport, plus the cost of the fsyncs ServerFS does, measured raw on the same
 * disk with the same steps, so that "ServerFS minus its fsyncs" can be set against
 * server-filesystem. Every contender works in its own directory of the same mutation root.
 */
export interface MutationPlan {
  readonly warmup: number
  readonly iterations: number
  /** Size of the files created, edited and deleted. */
  readonly bytes: number
}

export interface MutationResults {
  readonly rows: Row[]
  /** The fsync costs on their own (file and directory separately, and per-run sums). */
  readonly fsyncs: Measurement[]
}

const WORKDIR = "bench"

/** The line every edit changes: `marker: 00000001` → `marker: 00000002` (same size). */
export const marker = (n: number): string => `marker: ${String(n).padStart(8, "0")}`

/** Deterministic ASCII text of exactly `bytes` bytes (at least 64) with one marker line in the middle. */
export const fileContent = (bytes: number, markerNumber: number): string => {
  const line = (i: number) =>
    `line ${String(i).padStart(4, "0")}: the quick brown fox jumps over the lazy dog\n`
  let head = ""
  for (let i = 0; head.length < bytes / 2; i++) head += line(i)
  let tail = ""
  for (let i = 5000; tail.length < bytes; i++) tail += line(i)
  const middle = `${marker(markerNumber)}\n`
  const half = Math.max(0, Math.floor((bytes - middle.length) / 2))
  const text = head.slice(0, half) + middle + tail
  return text.slice(0, bytes)
}

/** One server's figures minus the fsync figures: the estimate of its cost without the fsyncs. */
const minus = (own: Summary, fsyncs: Summary): Summary => ({
  n: own.n,
  p50: own.p50 - fsyncs.p50,
  p95: own.p95 - fsyncs.p95,
  p99: own.p99 - fsyncs.p99,
  mean: own.mean - fsyncs.mean,
  min: Number.NaN,
  max: Number.NaN
})

/** A durable raw contender: it times only its fsyncs, and keeps them apart for the fsync table. */
class FsyncRecorder {
  private readonly file: number[] = []
  private readonly dir: number[] = []

  constructor(private readonly warmup: number) {}

  record(times: FsyncTimes): number {
    this.file.push(times.fileMs)
    this.dir.push(times.dirMs)
    return times.fileMs + times.dirMs
  }

  /** The samples of the timed rounds (the warm-up ones dropped). */
  get fileSummary(): Summary {
    return summarize(this.file.slice(this.warmup))
  }

  get dirSummary(): Summary {
    return summarize(this.dir.slice(this.warmup))
  }
}

const expect = (what: string, actual: unknown, expected: unknown): void => {
  if (actual !== expected) {
    throw new Error(`sanity check failed: ${what}: got ${String(actual)}, expected ${String(expected)}`)
  }
}

export const runMutations = async (
  root: string,
  serverfs: McpSession,
  reference: McpSession,
  plan: MutationPlan,
  progress: (message: string) => void
): Promise<MutationResults> => {
  const content = fileContent(plan.bytes, 0)
  const bytes = Buffer.from(content, "utf8")
  const kib = `${(plan.bytes / 1024).toFixed(plan.bytes % 1024 === 0 ? 0 : 1)} KiB`
  const options = { warmup: plan.warmup, iterations: plan.iterations }
  const warmup = Math.min(plan.warmup, plan.iterations)
  const dirs: RawDirectory[] = []
  const directory = (name: string): RawDirectory => {
    const dir = new RawDirectory(`${root}/${name}`)
    dirs.push(dir)
    return dir
  }
  const rows: Row[] = []
  const fsyncs: Measurement[] = []

  try {
    // ---- create ------------------------------------------------------------------------------
    const createOwn = directory("create-serverfs")
    const createTheirs = directory("create-reference")
    const createDurable = directory("create-raw-durable")
    const createPlain = directory("create-raw-plain")
    const counters = { own: 0, theirs: 0, durable: 0, plain: 0 }
    const createFsyncs = new FsyncRecorder(warmup)

    // Sanity: each server creates the exact bytes.
    await serverfs.callValidated("create_text_file", {
      workdir: WORKDIR,
      path: "create-serverfs/sanity.txt",
      content
    })
    expect(
      "ServerFS create_text_file content",
      fs.readFileSync(createOwn.join("sanity.txt"), "utf8"),
      content
    )
    await reference.call("write_file", { path: createTheirs.join("sanity.txt"), content })
    expect(
      "server-filesystem write_file content",
      fs.readFileSync(createTheirs.join("sanity.txt"), "utf8"),
      content
    )

    progress(`create (${plan.iterations} rounds, ${kib} files)`)
    const create = await measure(
      [
        {
          label: "ServerFS",
          run: () =>
            serverfs.call("create_text_file", {
              workdir: WORKDIR,
              path: `create-serverfs/f-${counters.own++}.txt`,
              content
            })
        },
        {
          label: "server-filesystem write_file (new file, no fsync)",
          run: () =>
            reference.call("write_file", { path: createTheirs.join(`f-${counters.theirs++}.txt`), content })
        },
        {
          label: "fsync(file) + fsync(dir), create steps (raw)",
          selfTimed: true,
          run: async () =>
            createFsyncs.record(durableCreate(createDurable, `f-${counters.durable++}.txt`, bytes))
        },
        {
          label: "fs.writeFileSync wx (raw, no fsync)",
          run: async () => plainCreate(createPlain, `f-${counters.plain++}.txt`, content)
        }
      ],
      options
    )

    // ---- edit --------------------------------------------------------------------------------
    const editDir = directory("edit")
    const editState = { ownRevision: "", own: 0, theirs: 0, durable: 0, plain: 0 }
    const created = structured(
      await serverfs.call("create_text_file", { workdir: WORKDIR, path: "edit/serverfs.txt", content })
    )
    editState.ownRevision = String(created.revision)
    for (const name of ["reference.txt", "raw-durable.txt", "raw-plain.txt"])
      prepareFile(editDir, name, bytes)
    fs.fsyncSync(editDir.fd)
    const editFsyncs = new FsyncRecorder(warmup)
    const ownEdit = async (validated: boolean) => {
      const args = {
        workdir: WORKDIR,
        path: "edit/serverfs.txt",
        expected_revision: editState.ownRevision,
        edits: [{ old_text: marker(editState.own), new_text: marker(editState.own + 1) }]
      }
      const result = structured(
        validated
          ? await serverfs.callValidated("edit_text_file", args)
          : await serverfs.call("edit_text_file", args)
      )
      editState.own++
      editState.ownRevision = String(result.revision)
    }
    const theirEdit = () =>
      reference.call("edit_file", {
        path: editDir.join("reference.txt"),
        edits: [{ oldText: marker(editState.theirs), newText: marker(++editState.theirs) }]
      })

    // Sanity: one edit each changes exactly the marker line.
    await ownEdit(true)
    expect(
      "ServerFS edit_text_file content",
      fs.readFileSync(editDir.join("serverfs.txt"), "utf8"),
      fileContent(plan.bytes, 1)
    )
    await theirEdit()
    expect(
      "server-filesystem edit_file content",
      fs.readFileSync(editDir.join("reference.txt"), "utf8"),
      fileContent(plan.bytes, 1)
    )
    editState.durable = 1
    editState.plain = 1
    durableEdit(editDir, "raw-durable.txt", marker(0), marker(1))
    plainEdit(editDir, "raw-plain.txt", marker(0), marker(1))

    progress(`edit (${plan.iterations} rounds, one 16-byte replacement in a ${kib} file)`)
    const edit = await measure(
      [
        { label: "ServerFS", run: () => ownEdit(false) },
        { label: "server-filesystem edit_file (same edit, no fsync)", run: theirEdit },
        {
          label: "fsync(file) + fsync(dir), edit steps (raw)",
          selfTimed: true,
          run: async () =>
            editFsyncs.record(
              durableEdit(editDir, "raw-durable.txt", marker(editState.durable), marker(++editState.durable))
            )
        },
        {
          label: "read + replace + write temp + rename (raw, no fsync)",
          run: async () =>
            plainEdit(editDir, "raw-plain.txt", marker(editState.plain), marker(++editState.plain))
        }
      ],
      options
    )
    expect(
      "ServerFS edit_text_file content after the run",
      fs.readFileSync(editDir.join("serverfs.txt"), "utf8"),
      fileContent(plan.bytes, editState.own)
    )

    // ---- delete ------------------------------------------------------------------------------
    // Every file a delete removes is created (and made durable) before the timed part; ServerFS
    // gets each one's revision from stat_file, untimed.
    const deleteOwn = directory("delete-serverfs")
    const deleteDurable = directory("delete-raw-durable")
    const deletePlain = directory("delete-raw-plain")
    const moveDir = directory("move-reference")
    const total = warmup + plan.iterations + 1
    for (const dir of [deleteOwn, deleteDurable, deletePlain]) {
      for (let i = 0; i < total; i++) prepareFile(dir, `f-${i}.txt`, bytes)
      fs.fsyncSync(dir.fd)
    }
    prepareFile(moveDir, "a.txt", bytes)
    fs.fsyncSync(moveDir.fd)
    progress(`delete: ${total} files per contender created beforehand`)
    const revisions: Array<{ path: string; revision: string }> = []
    for (let i = 0; i < total; i++) {
      const stat = structured(
        await serverfs.call("stat_file", { workdir: WORKDIR, path: `delete-serverfs/f-${i}.txt` })
      )
      revisions.push({ path: `delete-serverfs/f-${i}.txt`, revision: String(stat.revision) })
    }
    const deleteFsyncs = new FsyncRecorder(warmup)
    const deleteCounters = { durable: 0, plain: 0, moves: 0 }
    const ownDelete = async (validated: boolean) => {
      const next = revisions.shift()
      if (next === undefined) throw new Error("delete: no prepared file left")
      const args = { workdir: WORKDIR, path: next.path, expected_revision: next.revision }
      if (validated) await serverfs.callValidated("delete_file", args)
      else await serverfs.call("delete_file", args)
      return next.path
    }
    const sanityDeleted = await ownDelete(true)
    expect("ServerFS delete_file removed the file", fs.existsSync(`${root}/${sanityDeleted}`), false)

    progress(`delete (${plan.iterations} rounds)`)
    const del = await measure(
      [
        { label: "ServerFS", run: () => ownDelete(false) },
        {
          label: "fs.unlinkSync (raw; server-filesystem has no delete tool)",
          run: async () => fs.unlinkSync(deletePlain.join(`f-${deleteCounters.plain++}.txt`))
        },
        {
          label: "fsync(dir) after unlink (raw)",
          selfTimed: true,
          run: async () =>
            deleteFsyncs.record(durableDelete(deleteDurable, `f-${deleteCounters.durable++}.txt`))
        },
        {
          label: "server-filesystem move_file (a rename, not a delete)",
          run: () => {
            const [from, to] = deleteCounters.moves++ % 2 === 0 ? ["a.txt", "b.txt"] : ["b.txt", "a.txt"]
            return reference.call("move_file", { source: moveDir.join(from), destination: moveDir.join(to) })
          }
        }
      ],
      options
    )

    // ---- rows --------------------------------------------------------------------------------
    const rowsOf = (
      operation: string,
      results: Map<string, Summary>,
      contenders: ReadonlyArray<string>,
      fsyncLabel: string,
      fsyncWhat: string,
      against: string | undefined
    ): Row[] => {
      const own = results.get("ServerFS")!
      const fsync = results.get(fsyncLabel)!
      const comparable = contenders.filter((c) => c !== fsyncLabel)
      return [
        {
          operation,
          unit: "ms",
          serverfs: own,
          baselines: contenders.map((label) => ({ label, summary: results.get(label)! }))
        },
        {
          operation: `  ${operation.split(",")[0]} minus ${fsyncWhat} (estimate)`,
          unit: "ms",
          serverfs: minus(own, fsync),
          baselines: comparable.map((label) => ({ label, summary: results.get(label)! })),
          ...(against === undefined ? {} : { target: { against, maxRatio: 1 } })
        }
      ]
    }
    const labels = (results: Map<string, Summary>) => [...results.keys()].filter((k) => k !== "ServerFS")
    rows.push(
      ...rowsOf(
        `create_text_file, new ${kib} file`,
        create,
        labels(create),
        "fsync(file) + fsync(dir), create steps (raw)",
        "fsync(file) + fsync(dir)",
        "server-filesystem write_file (new file, no fsync)"
      ),
      ...rowsOf(
        `edit_text_file, one 16-byte edit, ${kib} file`,
        edit,
        labels(edit),
        "fsync(file) + fsync(dir), edit steps (raw)",
        "fsync(file) + fsync(dir)",
        "server-filesystem edit_file (same edit, no fsync)"
      ),
      ...rowsOf(
        `delete_file, ${kib} file`,
        del,
        labels(del),
        "fsync(dir) after unlink (raw)",
        "fsync(dir)",
        undefined
      )
    )
    fsyncs.push(
      {
        label: `fsync(file): new ${kib} temp file (create steps)`,
        unit: "ms",
        summary: createFsyncs.fileSummary
      },
      {
        label: "fsync(dir): after the rename into a new name (create steps)",
        unit: "ms",
        summary: createFsyncs.dirSummary
      },
      {
        label: "fsync(file) + fsync(dir), create steps, per run",
        unit: "ms",
        summary: create.get("fsync(file) + fsync(dir), create steps (raw)")!
      },
      { label: `fsync(file): ${kib} temp file (edit steps)`, unit: "ms", summary: editFsyncs.fileSummary },
      {
        label: "fsync(dir): after the rename over the original (edit steps)",
        unit: "ms",
        summary: editFsyncs.dirSummary
      },
      {
        label: "fsync(file) + fsync(dir), edit steps, per run",
        unit: "ms",
        summary: edit.get("fsync(file) + fsync(dir), edit steps (raw)")!
      },
      { label: "fsync(dir): after the unlink (delete steps)", unit: "ms", summary: deleteFsyncs.dirSummary }
    )
    return { rows, fsyncs }
  } finally {
    for (const dir of dirs) dir.close()
  }
}
