import { type ChildProcessByStdio, spawn } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import {
  AddressNotAllowed,
  BinaryPayloadTooLarge,
  DnsFailed,
  type FileIngressError,
  FileIngressFailed,
  FileIngressUnavailable,
  HostNotAllowed,
  TooManyRedirects,
  UpstreamFailed,
  UrlNotAllowed
} from "@serverfs/domain"
import { FileIngress, type FileIngressRequest } from "@serverfs/workspace"
import { Duration, Effect, Layer } from "effect"
import {
  type FetchRequest,
  FRAME_DATA,
  FRAME_DONE,
  FRAME_ERROR,
  FRAME_READY,
  type IngressTestAllowance,
  MAX_DATA_FRAME
} from "./Protocol.js"

/**
 * The FileIngress port's implementation: every fetch runs in a fresh fetcher process (fetcher.ts)
 * with an empty environment, so the MCP process opens no connection to the Internet itself. The
 * parent bounds what it accepts (frame sizes, total bytes ≤ maxBytes) and the time the child may
 * take; the child is killed when the fetch ends, times out or is interrupted.
 */
export interface FileIngressOptions {
  readonly allowedHosts: ReadonlyArray<string>
  readonly allowOpenaiBlobHosts: boolean
  readonly maxRedirects: number
  readonly fetchTimeoutSeconds: number
  /** Overall deadline, child start included (SERVERFS_FILE_INGRESS_TIMEOUT_SECONDS). */
  readonly timeoutSeconds: number
  /** The fetcher entry; defaults to fetcher.js next to this module (the built dist). */
  readonly fetcherPath?: string | undefined
  /** Most fetcher processes alive at once (default 2); more calls wait within their deadline. */
  readonly maxConcurrentFetches?: number | undefined
  /** Test-only: never set from configuration (docs/security-model.md, "File ingress"). */
  readonly testAllowance?: IngressTestAllowance | undefined
}

type Failure = FileIngressError | BinaryPayloadTooLarge

/** fetcher.js next to this module in dist; run from source (tests), the built one in dist. */
const defaultFetcherPath = (): string =>
  fileURLToPath(
    import.meta.url.endsWith(".ts")
      ? new URL("../../dist/ingress/fetcher.js", import.meta.url)
      : new URL("./fetcher.js", import.meta.url)
  )

const failureOf = (code: string, at: { workdir: string; path: string }, maxBytes: number): Failure => {
  switch (code) {
    case "URL_NOT_ALLOWED":
      return new UrlNotAllowed(at)
    case "HOST_NOT_ALLOWED":
      return new HostNotAllowed(at)
    case "ADDRESS_NOT_ALLOWED":
      return new AddressNotAllowed(at)
    case "DNS_FAILED":
      return new DnsFailed(at)
    case "TOO_MANY_REDIRECTS":
      return new TooManyRedirects(at)
    case "UPSTREAM_FAILED":
      return new UpstreamFailed(at)
    case "BINARY_PAYLOAD_TOO_LARGE":
      return new BinaryPayloadTooLarge({ ...at, maxBytes })
    default:
      return new FileIngressFailed(at)
  }
}

type Child = ChildProcessByStdio<Writable, Readable, null>

const kill = (child: Child) =>
  Effect.sync(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })

/** Reads the child's frames until DONE or ERROR; every byte count is bounded. */
const collect = (child: Child, request: Buffer, maxBytes: number, at: { workdir: string; path: string }) =>
  Effect.async<Uint8Array, Failure>((resume) => {
    let ready = false
    let settled = false
    let pending: Buffer = Buffer.alloc(0)
    const chunks: Buffer[] = []
    let total = 0
    const settle = (outcome: Effect.Effect<Uint8Array, Failure>) => {
      if (settled) return
      settled = true
      child.stdout.pause()
      resume(outcome)
    }
    const onData = (data: Buffer) => {
      pending = pending.length === 0 ? data : Buffer.concat([pending, data])
      while (!settled && pending.length >= 5) {
        const type = pending.readUInt8(0)
        const length = pending.readUInt32BE(1)
        if (length > MAX_DATA_FRAME) return settle(Effect.fail(new FileIngressFailed(at)))
        if (pending.length < 5 + length) return
        const payload = pending.subarray(5, 5 + length)
        pending = pending.subarray(5 + length)
        if (type === FRAME_READY && !ready) {
          ready = true
        } else if (!ready) {
          return settle(Effect.fail(new FileIngressFailed(at)))
        } else if (type === FRAME_DATA) {
          total += payload.length
          if (total > maxBytes) return settle(Effect.fail(new BinaryPayloadTooLarge({ ...at, maxBytes })))
          chunks.push(Buffer.from(payload))
        } else if (type === FRAME_DONE) {
          return settle(Effect.succeed(new Uint8Array(Buffer.concat(chunks, total))))
        } else if (type === FRAME_ERROR && length <= 64) {
          return settle(Effect.fail(failureOf(payload.toString("ascii"), at, maxBytes)))
        } else {
          return settle(Effect.fail(new FileIngressFailed(at)))
        }
      }
    }
    const onEnd = () =>
      settle(Effect.fail(ready ? new FileIngressFailed(at) : new FileIngressUnavailable(at)))
    const onSpawnError = () => settle(Effect.fail(new FileIngressUnavailable(at)))
    child.stdout.on("data", onData)
    child.stdout.once("close", onEnd)
    child.once("error", onSpawnError)
    child.stdin.on("error", () => {})
    child.stdin.end(request)
    return Effect.sync(() => {
      child.stdout.off("data", onData)
      child.stdout.off("close", onEnd)
      child.off("error", onSpawnError)
    })
  })

const spawnFetcher = (fetcherPath: string, at: { workdir: string; path: string }) =>
  Effect.acquireRelease(
    Effect.try({
      try: (): Child =>
        spawn(process.execPath, ["--max-old-space-size=64", fetcherPath], {
          // No inherited variables: no proxy, no NODE_OPTIONS, no secrets of the MCP process.
          env: {},
          stdio: ["pipe", "pipe", "ignore"],
          windowsHide: true
        }),
      catch: () => new FileIngressUnavailable(at)
    }),
    kill
  )

export const makeFileIngress = (options: FileIngressOptions): FileIngress["Type"] => {
  const fetcherPath = options.fetcherPath ?? defaultFetcherPath()
  // Each fetch is a Node process: a burst of uploads must not become a burst of processes.
  const slots = Effect.unsafeMakeSemaphore(options.maxConcurrentFetches ?? 2)
  return {
    enabled: true,
    fetch: (request: FileIngressRequest) => {
      const at = { workdir: request.workdir, path: request.path }
      const body: FetchRequest = {
        url: request.source.download_url,
        maxBytes: request.maxBytes,
        allowedHosts: options.allowedHosts,
        allowOpenaiBlobHosts: options.allowOpenaiBlobHosts,
        maxRedirects: options.maxRedirects,
        fetchTimeoutMs: Math.ceil(options.fetchTimeoutSeconds * 1000),
        test: options.testAllowance
      }
      const json = Buffer.from(JSON.stringify(body), "utf8")
      const header = Buffer.alloc(4)
      header.writeUInt32BE(json.length, 0)
      return slots
        .withPermits(1)(
          Effect.scoped(
            Effect.flatMap(spawnFetcher(fetcherPath, at), (child) =>
              collect(child, Buffer.concat([header, json]), request.maxBytes, at)
            )
          )
        )
        .pipe(
          Effect.timeoutFail({
            duration: Duration.millis(Math.ceil(options.timeoutSeconds * 1000)),
            onTimeout: () => new FileIngressFailed(at)
          })
        )
    }
  }
}

export const fileIngressLayer = (options: FileIngressOptions) =>
  Layer.succeed(FileIngress, makeFileIngress(options))
