import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { AuditSink } from "@serverfs/telemetry-local"
import { eventually, repoRoot } from "@serverfs/testkit"
import { FileIngress, FileIngressDisabledLayer } from "@serverfs/workspace"
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { afterAll, beforeAll } from "vitest"
import { fetchUrl, isPublicAddress } from "../../src/ingress/Fetch.js"
import {
  type FileIngressOptions,
  fileIngressLayer,
  makeFileIngress
} from "../../src/ingress/FileIngressLive.js"
import type { FetchRequest, IngressTestAllowance } from "../../src/ingress/Protocol.js"
import { McpServerLayer } from "../../src/Layers.js"
import { certificate, PUBLIC_ADDRESS, startServer, type TestServer } from "./support.js"

/**
 * The file ingress against a loopback HTTPS server, through the real fetcher process
 * (apps/mcp/dist/bundle/fetcher.js: run `npm run build` after changing it). The test allowance
 * adds the test CA, the server's port, 127.0.0.2 as a "public" address and fixed DNS answers;
 * 127.0.0.1 stays loopback and refused. Every refusal returns no bytes.
 */
const fetcherPath = path.join(repoRoot, "apps/mcp/dist/bundle/fetcher.js")
const MAX = 1024 * 1024
const GOOD = randomBytes(300 * 1024)
const EVIL = Buffer.from("bytes from the rebound address")

let server: TestServer
let evil: TestServer
let otherCa: string
let active = 0
let maxActive = 0

beforeAll(async () => {
  const pem = certificate()
  otherCa = certificate().cert
  server = await startServer(pem)
  // Same port on real loopback: where a re-resolved (unpinned) connection would land.
  evil = await startServer(pem, "127.0.0.1", server.port)
  evil.route("/ok", (_req, res) => res.writeHead(200).end(EVIL))
  const base = `https://files.example.test:${server.port}`
  server.route("/ok", (_req, res) => res.writeHead(200, { "content-length": GOOD.length }).end(GOOD))
  server.route("/exact", (_req, res) => res.writeHead(200).end(Buffer.alloc(MAX, 7)))
  server.route("/big", (_req, res) => res.writeHead(200, { "content-length": MAX + 1 }).end(Buffer.alloc(16)))
  server.route("/big-chunked", (_req, res) => {
    res.writeHead(200)
    for (let i = 0; i < 20; i++) res.write(Buffer.alloc(64 * 1024, 1))
    res.end()
  })
  server.route("/missing", (_req, res) => res.writeHead(404).end("not here"))
  server.route("/broken", (_req, res) => res.writeHead(500).end())
  server.route("/gzip", (_req, res) => res.writeHead(200, { "content-encoding": "gzip" }).end(GOOD))
  server.route("/slow", (_req, res) => {
    res.writeHead(200, { "content-length": 1000 })
    const timer = setInterval(() => res.write("x"), 100)
    res.once("close", () => clearInterval(timer))
  })
  server.route("/hang", () => {})
  server.route("/counted", (_req, res) => {
    active++
    maxActive = Math.max(maxActive, active)
    setTimeout(() => {
      active--
      res.writeHead(200).end(GOOD)
    }, 300)
  })
  server.route("/to-private", (_req, res) =>
    res.writeHead(302, { location: `https://private.example.test:${server.port}/ok` }).end()
  )
  server.route("/to-http", (_req, res) =>
    res.writeHead(302, { location: `http://files.example.test:${server.port}/ok` }).end()
  )
  server.route("/to-evil-host", (_req, res) =>
    res.writeHead(301, { location: `https://evil.example.test:${server.port}/ok` }).end()
  )
  server.route("/to-other", (_req, res) =>
    res.writeHead(307, { location: `https://other.example.test:${server.port}/ok` }).end()
  )
  // /hop/i answers with i + 1 redirects before /ok.
  for (let i = 0; i < 5; i++) {
    server.route(`/hop/${i}`, (_req, res) =>
      res.writeHead(302, { location: i === 0 ? "/ok" : `${base}/hop/${i - 1}` }).end()
    )
  }
})

afterAll(async () => {
  await evil?.close()
  await server?.close()
})

const allowance = (dnsAnswers?: Record<string, string[][]>): IngressTestAllowance => ({
  caPem: server.caPem,
  port: server.port,
  publicAddresses: [PUBLIC_ADDRESS],
  dnsAnswers: dnsAnswers ?? {
    "files.example.test": [[PUBLIC_ADDRESS]],
    "other.example.test": [[PUBLIC_ADDRESS]],
    "evil.example.test": [[PUBLIC_ADDRESS]],
    "private.example.test": [["127.0.0.1"]]
  }
})

const options = (over: Partial<FileIngressOptions> = {}): FileIngressOptions => ({
  allowedHosts: ["files.example.test", "other.example.test", "private.example.test"],
  allowOpenaiBlobHosts: false,
  maxRedirects: 3,
  fetchTimeoutSeconds: 10,
  timeoutSeconds: 20,
  fetcherPath,
  testAllowance: allowance(),
  ...over
})

const url = (route: string, host = "files.example.test") => `https://${host}:${server.port}${route}`

const fetchWith = (downloadUrl: string, over: Partial<FileIngressOptions> = {}, maxBytes = MAX) =>
  makeFileIngress(options(over)).fetch({
    source: { download_url: downloadUrl, file_id: "file-1", file_name: "../../etc/passwd" },
    workdir: "w",
    path: "in.bin",
    maxBytes
  })

/** The error code of a failed fetch; the test fails if bytes came back. */
const codeOf = (downloadUrl: string, over: Partial<FileIngressOptions> = {}, maxBytes = MAX) =>
  Effect.map(Effect.either(fetchWith(downloadUrl, over, maxBytes)), (r) =>
    Either.isLeft(r) ? r.left._tag : `returned ${r.right.length} bytes`
  )

describe("file ingress: a good fetch", () => {
  it.live("returns the exact bytes, whatever file_name says", () =>
    Effect.gen(function* () {
      const bytes = yield* fetchWith(url("/ok"))
      expect(Buffer.from(bytes).equals(GOOD)).toBe(true)
    })
  )

  it.live("exactly maxBytes is accepted; redirects up to the cap are followed", () =>
    Effect.gen(function* () {
      expect((yield* fetchWith(url("/exact"))).length).toBe(MAX)
      expect(Buffer.from(yield* fetchWith(url("/hop/2"))).equals(GOOD)).toBe(true)
      expect(Buffer.from(yield* fetchWith(url("/to-other"))).equals(GOOD)).toBe(true)
    })
  )

  it.live("the Layer from options provides an enabled port; the disabled Layer is off", () =>
    Effect.gen(function* () {
      const live = yield* Effect.provide(FileIngress, fileIngressLayer(options()))
      expect(live.enabled).toBe(true)
      const off = yield* Effect.provide(FileIngress, FileIngressDisabledLayer)
      expect(off.enabled).toBe(false)
    })
  )
})

describe("file ingress: the production wiring", () => {
  const portFrom = (env: Record<string, string>) =>
    Effect.scoped(
      Effect.flatMap(
        Layer.build(
          McpServerLayer.pipe(
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
            Layer.provideMerge(AuditSink.memory().layer)
          )
        ),
        (context) => Effect.provide(FileIngress, context)
      )
    )

  it.live("McpServerLayer provides a disabled port by default and the live one when enabled", () =>
    Effect.gen(function* () {
      expect((yield* portFrom({})).enabled).toBe(false)
      const live = yield* portFrom({
        SERVERFS_FILE_INGRESS_ENABLED: "true",
        SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS: "true"
      })
      expect(live.enabled).toBe(true)
      // No test allowance in production: this server's port and loopback stay out of reach.
      expect(
        yield* Effect.map(
          Effect.either(
            live.fetch({
              source: { download_url: url("/ok"), file_id: "file-1" },
              workdir: "w",
              path: "in.bin",
              maxBytes: MAX
            })
          ),
          (r) => (Either.isLeft(r) ? r.left._tag : "bytes")
        )
      ).toBe("URL_NOT_ALLOWED")
    })
  )
})

describe("file ingress: DNS answers are checked, then the checked address is connected to", () => {
  it.live(
    "an answer that changes to 127.0.0.1 after the check is never used → the checked server's bytes",
    () =>
      Effect.gen(function* () {
        const bytes = yield* fetchWith(url("/ok"), {
          testAllowance: allowance({ "files.example.test": [[PUBLIC_ADDRESS], ["127.0.0.1"]] })
        })
        expect(Buffer.from(bytes).equals(GOOD)).toBe(true)
      })
  )

  it("in process: the resolver is asked once per hop and the connection is pinned to its first answer", async () => {
    const asked: string[] = []
    const chunks: Buffer[] = []
    const request: FetchRequest = {
      url: url("/ok"),
      maxBytes: MAX,
      allowedHosts: ["files.example.test"],
      allowOpenaiBlobHosts: false,
      maxRedirects: 3,
      fetchTimeoutMs: 10_000,
      test: allowance()
    }
    const outcome = await fetchUrl(
      request,
      async (chunk) => {
        chunks.push(chunk)
      },
      async (host) => {
        asked.push(host)
        return asked.length === 1 ? [PUBLIC_ADDRESS] : ["127.0.0.1"]
      }
    )
    expect(outcome).toEqual({ ok: true })
    expect(asked).toEqual(["files.example.test"])
    expect(Buffer.concat(chunks).equals(GOOD)).toBe(true)
  })

  it.live("a redirect to a host resolving to loopback → ADDRESS_NOT_ALLOWED", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/to-private"))).toBe("ADDRESS_NOT_ALLOWED")
    })
  )

  it.live("one private address among the answers → ADDRESS_NOT_ALLOWED", () =>
    Effect.gen(function* () {
      const testAllowance = allowance({ "files.example.test": [[PUBLIC_ADDRESS, "10.0.0.7"]] })
      expect(yield* codeOf(url("/ok"), { testAllowance })).toBe("ADDRESS_NOT_ALLOWED")
    })
  )

  it.live("no answer → DNS_FAILED", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/ok"), { testAllowance: allowance({}) })).toBe("DNS_FAILED")
    })
  )

  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "fd00::1",
    "fe80::1",
    "ff02::1",
    "64:ff9b::a00:1",
    "2002:a00:1::1",
    "not-an-address"
  ])("%s is not a public address", (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  it.each(["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])("%s is a public address", (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })
})

describe("file ingress: URL, host, redirect and status refusals", () => {
  it.live.each([
    ["http://files.example.test/ok", "URL_NOT_ALLOWED"],
    ["ftp://files.example.test/ok", "URL_NOT_ALLOWED"],
    ["file:///etc/passwd", "URL_NOT_ALLOWED"],
    ["https://user:secret@files.example.test/ok", "URL_NOT_ALLOWED"],
    ["https://files.example.test:8443/ok", "URL_NOT_ALLOWED"],
    ["https://files.example.test./ok", "URL_NOT_ALLOWED"],
    ["https://files.example.test\\@evil.example.test/ok", "URL_NOT_ALLOWED"],
    ["https://files.example.test/ ok", "URL_NOT_ALLOWED"],
    [`https://files.example.test/${"a".repeat(9000)}`, "URL_NOT_ALLOWED"],
    ["not a url", "URL_NOT_ALLOWED"],
    ["https://[::1]/ok", "URL_NOT_ALLOWED"]
  ])("%s → %s", ([downloadUrl, code]) =>
    Effect.gen(function* () {
      expect(yield* codeOf(downloadUrl as string)).toBe(code)
    })
  )

  it.live("a host not on the list, an IP literal or a look-alike → HOST_NOT_ALLOWED", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/ok", "evil.example.test"))).toBe("HOST_NOT_ALLOWED")
      expect(yield* codeOf(url("/ok", PUBLIC_ADDRESS))).toBe("HOST_NOT_ALLOWED")
      expect(yield* codeOf(url("/ok", "files.example.test.evil.example.test"))).toBe("HOST_NOT_ALLOWED")
      expect(yield* codeOf(url("/ok", "x.files.example.test"))).toBe("HOST_NOT_ALLOWED")
    })
  )

  it.live("a redirect to http → URL_NOT_ALLOWED; to a host not on the list → HOST_NOT_ALLOWED", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/to-http"))).toBe("URL_NOT_ALLOWED")
      expect(yield* codeOf(url("/to-evil-host"))).toBe("HOST_NOT_ALLOWED")
    })
  )

  it.live("one redirect more than SERVERFS_FILE_INGRESS_MAX_REDIRECTS → TOO_MANY_REDIRECTS", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/hop/3"))).toBe("TOO_MANY_REDIRECTS")
      expect(yield* codeOf(url("/to-other"), { maxRedirects: 0 })).toBe("TOO_MANY_REDIRECTS")
    })
  )

  it.live("404, 500 or a compressed body → UPSTREAM_FAILED", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/missing"))).toBe("UPSTREAM_FAILED")
      expect(yield* codeOf(url("/broken"))).toBe("UPSTREAM_FAILED")
      expect(yield* codeOf(url("/gzip"))).toBe("UPSTREAM_FAILED")
    })
  )

  it.live("a certificate not signed by a trusted CA → FILE_INGRESS_FAILED (TLS stays verified)", () =>
    Effect.gen(function* () {
      const testAllowance = { ...allowance(), caPem: otherCa }
      expect(yield* codeOf(url("/ok"), { testAllowance })).toBe("FILE_INGRESS_FAILED")
    })
  )

  it("without the test allowance, loopback and a non-default port are refused", async () => {
    const base: FetchRequest = {
      url: "https://files.example.test/ok",
      maxBytes: MAX,
      allowedHosts: ["files.example.test"],
      allowOpenaiBlobHosts: false,
      maxRedirects: 3,
      fetchTimeoutMs: 5000
    }
    const sink = async () => {}
    expect(await fetchUrl(base, sink, async () => [PUBLIC_ADDRESS])).toEqual({
      ok: false,
      code: "ADDRESS_NOT_ALLOWED"
    })
    expect(await fetchUrl({ ...base, url: url("/ok") }, sink, async () => ["93.184.216.34"])).toEqual({
      ok: false,
      code: "URL_NOT_ALLOWED"
    })
  })

  it("the OpenAI blob family is allowed only when switched on, on a label boundary", async () => {
    const base: FetchRequest = {
      url: "https://files.oaiusercontent.com/file-abc",
      maxBytes: MAX,
      allowedHosts: [],
      allowOpenaiBlobHosts: false,
      maxRedirects: 3,
      fetchTimeoutMs: 5000
    }
    const sink = async () => {}
    const loopback = async () => ["127.0.0.1"]
    expect(await fetchUrl(base, sink, loopback)).toEqual({ ok: false, code: "HOST_NOT_ALLOWED" })
    // Switched on, the host passes and the address check is what refuses the loopback answer.
    const on = { ...base, allowOpenaiBlobHosts: true }
    expect(await fetchUrl(on, sink, loopback)).toEqual({ ok: false, code: "ADDRESS_NOT_ALLOWED" })
    expect(await fetchUrl({ ...on, url: "https://evil-oaiusercontent.com/x" }, sink, loopback)).toEqual({
      ok: false,
      code: "HOST_NOT_ALLOWED"
    })
  })
})

describe("file ingress: size and time bounds", () => {
  it.live("Content-Length over maxBytes → BINARY_PAYLOAD_TOO_LARGE", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/big"))).toBe("BINARY_PAYLOAD_TOO_LARGE")
      expect(yield* codeOf(url("/ok"), {}, GOOD.length - 1)).toBe("BINARY_PAYLOAD_TOO_LARGE")
    })
  )

  it.live("a chunked body growing past maxBytes → BINARY_PAYLOAD_TOO_LARGE", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/big-chunked"))).toBe("BINARY_PAYLOAD_TOO_LARGE")
    })
  )

  it.live(
    "a body that drips (slowloris) past the fetch deadline → FILE_INGRESS_FAILED within seconds",
    () =>
      Effect.gen(function* () {
        expect(yield* codeOf(url("/slow"), { fetchTimeoutSeconds: 1 })).toBe("FILE_INGRESS_FAILED")
      }),
    { timeout: 10_000 }
  )

  it.live(
    "a server that never answers, past the overall deadline → FILE_INGRESS_FAILED and the fetcher is killed",
    () =>
      Effect.gen(function* () {
        const before = server.sockets.size
        expect(yield* codeOf(url("/hang"), { timeoutSeconds: 1, fetchTimeoutSeconds: 60 })).toBe(
          "FILE_INGRESS_FAILED"
        )
        // The killed process's connection closes: the server sees its socket go.
        yield* eventually(
          "the fetcher's connection closed",
          Effect.sync(() => server.sockets.size <= before || undefined)
        )
      }),
    { timeout: 10_000 }
  )

  it.live("six uploads at once run at most two fetcher processes at a time, and all complete", () =>
    Effect.gen(function* () {
      const ingress = makeFileIngress(options())
      const one = ingress.fetch({
        source: { download_url: url("/counted"), file_id: "file-1" },
        workdir: "w",
        path: "in.bin",
        maxBytes: MAX
      })
      const results = yield* Effect.all(
        Array.from({ length: 6 }, () => one),
        { concurrency: "unbounded" }
      )
      expect(results.every((bytes) => Buffer.from(bytes).equals(GOOD))).toBe(true)
      expect(maxActive).toBeGreaterThanOrEqual(1)
      expect(maxActive).toBeLessThanOrEqual(2)
    })
  )

  it.live("a fetcher that cannot be started → FILE_INGRESS_UNAVAILABLE", () =>
    Effect.gen(function* () {
      expect(yield* codeOf(url("/ok"), { fetcherPath: path.join(repoRoot, "no/such/fetcher.js") })).toBe(
        "FILE_INGRESS_UNAVAILABLE"
      )
    })
  )
})

describe("file ingress: the MCP process stays bounded against its own fetcher", () => {
  const hostile = path.join(repoRoot, "apps/mcp/test/ingress/fixtures/hostile-fetcher.mjs")
  it.live.each([
    ["huge-frame", "FILE_INGRESS_FAILED"],
    ["flood", "BINARY_PAYLOAD_TOO_LARGE"],
    ["data-before-ready", "FILE_INGRESS_FAILED"],
    ["exit-after-ready", "FILE_INGRESS_FAILED"],
    ["silent", "FILE_INGRESS_FAILED"]
  ])("a fetcher that sends %s → %s", ([mode, code]) =>
    Effect.gen(function* () {
      expect(yield* codeOf(url(`/${mode}`), { fetcherPath: hostile, timeoutSeconds: 2 })).toBe(code)
    })
  )

  it("only the fetcher's modules reach the network: nothing else in apps/mcp/src imports http, https, tls, dns or Fetch.js", () => {
    const sources = fs
      .readdirSync(path.join(repoRoot, "apps/mcp/src"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
    const text = (f: string) => fs.readFileSync(path.join(repoRoot, "apps/mcp/src", f), "utf8")
    // The Streamable HTTP transport (http/) serves inbound connections with node:http; it may
    // import it, never make a request or open a client connection of its own.
    const transport = sources.filter((f) => f.startsWith("http/"))
    for (const f of transport) {
      expect(text(f), f).not.toMatch(
        /\bhttps?\.(request|get)\(|\bfetch\(|from "node:(https|tls|dns|http2|dgram)"/
      )
    }
    const importing = sources
      .filter((f) => !f.startsWith("http/"))
      .filter((f) => /from "node:(https?|tls|dns|http2|dgram)"|from "\.\/Fetch\.js"/.test(text(f)))
    expect(importing.sort()).toEqual(["ingress/Fetch.ts", "ingress/fetcher.ts"])
  })
})
