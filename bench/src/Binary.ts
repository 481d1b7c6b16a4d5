import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { McpSession } from "./McpDriver.js"
import { measure } from "./Measure.js"
import type { Row } from "./Report.js"

/**
 * Binary transfer: download_binary_file and upload_binary_file of serverfs-mcp against
 * @modelcontextprotocol/server-filesystem's nearest tools, read_media_file (base64 image content)
 * and write_file (it has no binary write: it is sent the same base64 as text, so the message is
 * the same size), over the same stdio transport, on random bytes.
 *
 * The MCP SDK's stdio reader refuses a message above 10 MiB on both ends. 8 MiB of data is
 * 11,184,812 bytes of base64, so no 8 MiB transfer can cross stdio in either direction with
 * either server: those cases are tried once and reported as notes, not timed. server-filesystem
 * sends a read_media_file blob twice (content and structuredContent), ServerFS once, against a
 * response budget of at most 6 MiB.
 */
export interface BinaryPlan {
  readonly warmup: number
  readonly iterations: number
}

const WORKDIR = "bench"
const MiB = 1024 * 1024
/** What both servers can carry over stdio: ServerFS's 6 MiB budget, server-filesystem's 2 × base64 < 10 MiB. */
const SIZES = [1 * MiB, 3 * MiB] as const
const TOO_LARGE = 8 * MiB

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

const check = (what: string, ok: boolean): void => {
  if (!ok) throw new Error(`sanity check failed: ${what}`)
}

export const runBinary = async (
  root: string,
  serverfs: McpSession,
  reference: McpSession,
  plan: BinaryPlan,
  progress: (message: string) => void
): Promise<{ readonly rows: Row[]; readonly notes: string[] }> => {
  const rows: Row[] = []
  const notes: string[] = []
  const options = { warmup: plan.warmup, iterations: plan.iterations }
  for (const size of SIZES) {
    const label = `${size / MiB} MiB`
    const bytes = randomBytes(size)
    const name = `file-${size}.png`
    fs.writeFileSync(path.join(root, name), bytes)
    const base64 = bytes.toString("base64")

    // Sanity: each server returns exactly the bytes.
    const own = await serverfs.call("download_binary_file", { workdir: WORKDIR, path: name })
    const ownBlob = (own.content[0] as { resource?: { blob?: string } }).resource?.blob ?? ""
    check(`ServerFS download ${label}`, sha(Buffer.from(ownBlob, "base64")) === sha(bytes))
    const theirs = await reference.call("read_media_file", { path: path.join(root, name) })
    const theirData = (theirs.content[0] as { data?: string }).data ?? ""
    check(`server-filesystem read_media_file ${label}`, sha(Buffer.from(theirData, "base64")) === sha(bytes))

    progress(`download ${label} (${plan.iterations} rounds)`)
    const download = await measure(
      [
        {
          label: "ServerFS",
          run: () => serverfs.call("download_binary_file", { workdir: WORKDIR, path: name })
        },
        {
          label: "server-filesystem read_media_file",
          run: () => reference.call("read_media_file", { path: path.join(root, name) })
        }
      ],
      options
    )
    rows.push({
      operation: `download_binary_file ${label}`,
      unit: "ms",
      serverfs: download.get("ServerFS")!,
      baselines: [
        {
          label: "server-filesystem read_media_file",
          summary: download.get("server-filesystem read_media_file")!
        }
      ]
    })

    const counters = { own: 0, theirs: 0 }
    const up = await serverfs.call("upload_binary_file", {
      workdir: WORKDIR,
      path: `up-sanity-${size}.bin`,
      data_base64: base64
    })
    check(`ServerFS upload ${label}`, (up.structuredContent as { sha256?: string }).sha256 === sha(bytes))
    check(
      `ServerFS upload ${label} on disk`,
      sha(fs.readFileSync(path.join(root, `up-sanity-${size}.bin`))) === sha(bytes)
    )
    progress(`upload ${label} (${plan.iterations} rounds)`)
    const upload = await measure(
      [
        {
          label: "ServerFS",
          run: () =>
            serverfs.call("upload_binary_file", {
              workdir: WORKDIR,
              path: `up-${size}-${counters.own++}.bin`,
              data_base64: base64
            })
        },
        {
          label: "server-filesystem write_file (same base64, as text)",
          run: () =>
            reference.call("write_file", {
              path: path.join(root, `w-${size}-${counters.theirs++}.b64`),
              content: base64
            })
        }
      ],
      options
    )
    rows.push({
      operation: `upload_binary_file ${label}`,
      unit: "ms",
      serverfs: upload.get("ServerFS")!,
      baselines: [
        {
          label: "server-filesystem write_file (same base64, as text)",
          summary: upload.get("server-filesystem write_file (same base64, as text)")!
        }
      ]
    })
  }

  // 8 MiB: ServerFS refuses the download before sending it; nothing larger than 10 MiB is sent.
  const big = "file-8m.png"
  fs.writeFileSync(path.join(root, big), randomBytes(TOO_LARGE))
  const started = performance.now()
  const refused = await serverfs.attempt("download_binary_file", { workdir: WORKDIR, path: big })
  const refusedMs = performance.now() - started
  const text = refused.content.map((c) => (c.type === "text" ? c.text : c.type)).join(" ")
  check(
    "ServerFS download 8 MiB → RESPONSE_TOO_LARGE",
    refused.isError === true && text.startsWith("RESPONSE_TOO_LARGE")
  )
  const encoded = 4 * Math.ceil(TOO_LARGE / 3)
  notes.push(
    `binary 8 MiB: download_binary_file answered RESPONSE_TOO_LARGE in ${refusedMs.toFixed(1)} ms (base64 ${encoded} bytes > the 6 MiB budget); ` +
      `server-filesystem read_media_file would send ${2 * encoded} bytes of base64 (content + structuredContent), which the SDK client's 10 MiB stdio limit drops (the call then hangs until its timeout), so it is not run; ` +
      `an 8 MiB upload is a ${encoded}-byte request, above the servers' own 10 MiB stdio limit for either tool, so neither upload is run.`
  )
  return { rows, notes }
}
