/**
 * The file-ingress fetcher process (spawned by FileIngressLive with an empty environment). It
 * reads one request frame from stdin, fetches, and writes frames to stdout; its stdout is a pipe
 * to the MCP process, never the MCP client's stdout. It has no workdir, no configuration of its
 * own and no credentials: everything it may do is in the request its parent wrote.
 */
import { fetchUrl, type Resolve } from "./Fetch.js"
import {
  type FetchRequest,
  FRAME_DATA,
  FRAME_DONE,
  FRAME_ERROR,
  FRAME_READY,
  frame,
  MAX_REQUEST_BYTES
} from "./Protocol.js"

const write = (chunk: Buffer): Promise<void> =>
  new Promise((resolve) => {
    if (process.stdout.write(chunk)) resolve()
    else process.stdout.once("drain", resolve)
  })

const finish = async (payload: Buffer): Promise<void> => {
  await new Promise<void>((resolve) => process.stdout.end(payload, resolve))
  process.exit(0)
}

const fail = (code: string) => finish(frame(FRAME_ERROR, Buffer.from(code, "ascii")))

const readRequest = async (): Promise<unknown> => {
  const parts: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_REQUEST_BYTES + 4) throw new Error("request too large")
    parts.push(chunk)
  }
  const all = Buffer.concat(parts)
  if (all.length < 4 || all.readUInt32BE(0) !== all.length - 4) throw new Error("bad frame")
  return JSON.parse(all.subarray(4).toString("utf8"))
}

const isRequest = (r: unknown): r is FetchRequest => {
  if (typeof r !== "object" || r === null) return false
  const q = r as Record<string, unknown>
  return (
    typeof q.url === "string" &&
    Number.isSafeInteger(q.maxBytes) &&
    Array.isArray(q.allowedHosts) &&
    q.allowedHosts.every((h) => typeof h === "string") &&
    typeof q.allowOpenaiBlobHosts === "boolean" &&
    Number.isSafeInteger(q.maxRedirects) &&
    typeof q.fetchTimeoutMs === "number"
  )
}

/** The test allowance's fixed DNS answers, in order per host; the last answer repeats. */
const scriptedResolve = (
  answers: Readonly<Record<string, ReadonlyArray<ReadonlyArray<string>>>>
): Resolve => {
  const served = new Map<string, number>()
  return async (host) => {
    const list = Object.hasOwn(answers, host) ? (answers[host] ?? []) : []
    const n = served.get(host) ?? 0
    served.set(host, n + 1)
    const answer = list[Math.min(n, list.length - 1)]
    if (answer === undefined) throw new Error("no answer")
    return answer
  }
}

const main = async (): Promise<void> => {
  await write(frame(FRAME_READY, Buffer.alloc(0)))
  let request: unknown
  try {
    request = await readRequest()
  } catch {
    return fail("FILE_INGRESS_FAILED")
  }
  if (!isRequest(request)) return fail("FILE_INGRESS_FAILED")
  const dnsAnswers = request.test?.dnsAnswers
  const outcome = await fetchUrl(
    request,
    async (chunk) => {
      for (let at = 0; at < chunk.length; at += 65536) {
        await write(frame(FRAME_DATA, chunk.subarray(at, at + 65536)))
      }
    },
    dnsAnswers === undefined ? undefined : scriptedResolve(dnsAnswers)
  )
  return outcome.ok ? finish(frame(FRAME_DONE, Buffer.alloc(0))) : fail(outcome.code)
}

// The parent closing the pipe (it gave up or was interrupted) ends this process.
process.stdout.on("error", () => process.exit(1))
main().catch(() => process.exit(1))
