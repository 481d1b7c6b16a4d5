import * as path from "node:path"
import { type McpSession, structured } from "./McpDriver.js"
import { rawList, rawReadText, rawStat } from "./RawFs.js"
import { rgFiles, rgJson } from "./RawRipgrep.js"
import type { Tree } from "./TreeGenerator.js"

/**
 * Before anything is timed, every contender does each operation once and must produce the
 * expected answer: a fast wrong answer (an error, an empty listing, a search that stopped at
 * nothing) must never pass for a fast sample. ServerFS calls here go through the SDK's
 * output-schema validation too.
 */
const expect = (what: string, actual: unknown, expected: unknown): void => {
  if (actual !== expected) {
    throw new Error(`sanity check failed: ${what}: got ${String(actual)}, expected ${String(expected)}`)
  }
}

const text = (value: Record<string, unknown>): string => {
  const content = value.content
  if (typeof content !== "string") throw new Error("server-filesystem returned no text content")
  return content
}

export const sanityCheck = async (tree: Tree, serverfs: McpSession, reference: McpSession): Promise<void> => {
  const root = tree.root
  const workdir = "bench"

  const rare = structured(
    await serverfs.callValidated("search_text", { workdir, query: tree.rareToken, limit: 100 })
  )
  expect("ServerFS search_text returned", rare.returned, 100)
  expect("ServerFS search_text truncated", rare.truncated, true)
  expect("rg --json rare matches", (await rgJson(root, tree.rareToken)).count, tree.spec.rareCount)
  expect("rg --json stopped at 100", (await rgJson(root, tree.rareToken, 100)).count, 100)

  const absent = structured(await serverfs.callValidated("search_text", { workdir, query: tree.absentQuery }))
  expect("ServerFS full-scan search returned", absent.returned, 0)
  expect("rg --json absent matches", (await rgJson(root, tree.absentQuery)).count, 0)

  const found = structured(
    await serverfs.callValidated("find_files", { workdir, pattern: tree.findPattern, limit: 100 })
  )
  expect("ServerFS find_files returned", found.returned, tree.spec.findCount)
  expect("ServerFS find_files truncated", found.truncated, false)
  expect("rg --files count", (await rgFiles(root, tree.findPattern)).count, tree.spec.findCount)
  const referenceFound = text(
    structured(await reference.call("search_files", { path: root, pattern: `**/${tree.findPattern}` }))
  )
  expect("server-filesystem search_files count", referenceFound.split("\n").length, tree.spec.findCount)

  for (const relative of tree.readTargets.slice(0, 4)) {
    const raw = rawReadText(root, relative)
    const own = structured(
      await serverfs.callValidated("read_text_file", { workdir, path: relative, max_lines: 500 })
    )
    expect(`ServerFS read_text_file ${relative} has_more`, own.has_more, false)
    expect(`ServerFS read_text_file ${relative} bytes`, own.bytes_returned, Buffer.byteLength(raw))
    const theirs = text(
      structured(await reference.call("read_text_file", { path: path.join(root, relative) }))
    )
    expect(`server-filesystem read_text_file ${relative}`, theirs, raw)
  }

  const statTarget = tree.statTargets[0]!
  const stat = structured(await serverfs.callValidated("stat_file", { workdir, path: statTarget }))
  expect("ServerFS stat_file size", stat.size, rawStat(root, statTarget).size)
  const info = text(structured(await reference.call("get_file_info", { path: path.join(root, statTarget) })))
  expect(
    "server-filesystem get_file_info size",
    info.includes(`size: ${rawStat(root, statTarget).size}`),
    true
  )

  for (const relative of tree.listTargets.slice(0, 4)) {
    const entries = rawList(root, relative).length
    const own = structured(
      await serverfs.callValidated("list_directory", { workdir, path: relative, limit: 500 })
    )
    expect(`ServerFS list_directory ${relative} returned`, own.returned, entries)
    expect(`ServerFS list_directory ${relative} has_more`, own.has_more, false)
    const theirs = text(
      structured(await reference.call("list_directory", { path: path.join(root, relative) }))
    )
    expect(`server-filesystem list_directory ${relative}`, theirs.split("\n").length, entries)
  }
}
