import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"

/** A fresh directory under os.tmpdir(); remove it with removeTempDir. */
export const makeTempDir = (prefix = "serverfs-policy-"): string =>
  fs.mkdtempSync(path.join(os.tmpdir(), prefix))

export const removeTempDir = (dir: string): void => fs.rmSync(dir, { recursive: true, force: true })

/**
 * Python's `fnmatch.fnmatchcase(name, pattern)` for every pair, in one python3 process. The
 * pairs go in as JSON on stdin (bytes, so the locale cannot change the decoding) and the
 * answers come back as an ASCII JSON list.
 */
export const pythonFnmatchcase = (
  pairs: ReadonlyArray<readonly [name: string, pattern: string]>
): boolean[] => {
  const script = [
    "import fnmatch, json, sys",
    "pairs = json.loads(sys.stdin.buffer.read())",
    "print(json.dumps([fnmatch.fnmatchcase(n, p) for n, p in pairs]))"
  ].join("\n")
  const run = spawnSync("python3", ["-c", script], {
    input: JSON.stringify(pairs),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  if (run.error !== undefined) throw run.error
  if (run.status !== 0) throw new Error(`python3 failed (${String(run.status)}): ${run.stderr}`)
  const answers: unknown = JSON.parse(run.stdout)
  if (!Array.isArray(answers) || answers.length !== pairs.length) {
    throw new Error("python3 returned a malformed answer")
  }
  return answers.map((a) => a === true)
}
