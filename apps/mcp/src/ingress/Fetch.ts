import { promises as dns } from "node:dns"
import type { IncomingMessage } from "node:http"
import https from "node:https"
import { BlockList, isIP, type LookupFunction } from "node:net"
import { type FetchCode, type FetchRequest, MAX_URL_LENGTH } from "./Protocol.js"

/**
 * The fetch itself, run inside the fetcher process (fetcher.ts) and nowhere else in production.
 * Every hop (the first URL and each redirect) is checked the same way: https only, an exact
 * allowed host, every resolved address public; the connection then goes to the checked address
 * (a `lookup` that answers with it), so a DNS answer that changes after the check is never used.
 * TLS still verifies the certificate against the host name. The URL is never logged or echoed.
 */
export type FetchOutcome = { readonly ok: true } | { readonly ok: false; readonly code: FetchCode }

export type Resolve = (host: string) => Promise<ReadonlyArray<string>>

/** OpenAI's file-download host family (SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS). */
export const OPENAI_BLOB_DOMAIN = "oaiusercontent.com"

// Two lists: a BlockList also matches IPv4 addresses against IPv6 rules (as ::ffff:a.b.c.d).
const REFUSED_V4 = new BlockList()
const REFUSED_V6 = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local (cloud metadata)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const)
  REFUSED_V4.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128],
  ["::ffff:0:0", 96], // IPv4-mapped: refused whatever it maps to
  ["64:ff9b::", 96], // NAT64: embeds an IPv4 address we would not see
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ["2001:db8::", 32],
  ["2002::", 16], // 6to4: embeds an IPv4 address
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local
  ["ff00::", 8] // multicast
] as const)
  REFUSED_V6.addSubnet(net, prefix, "ipv6")

/** Whether an address may be connected to: a literal IP outside every refused range. */
export const isPublicAddress = (address: string, extraPublic: ReadonlyArray<string> = []): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  if (extraPublic.includes(address)) return true
  return family === 4 ? !REFUSED_V4.check(address, "ipv4") : !REFUSED_V6.check(address, "ipv6")
}

const systemResolve: Resolve = async (host) => {
  const answers = await dns.lookup(host, { all: true, verbatim: true })
  return answers.map((a) => a.address)
}

class Refused extends Error {
  constructor(readonly code: FetchCode) {
    super(code)
  }
}

// Printable ASCII without space, backslash or quotes: anything else is a form we do not parse.
const URL_CHARS = /^https:\/\/[\x21\x23-\x26\x28-\x5b\x5d-\x7e]+$/i

const checkUrl = (raw: string, request: FetchRequest): URL => {
  if (raw.length > MAX_URL_LENGTH || !URL_CHARS.test(raw)) throw new Refused("URL_NOT_ALLOWED")
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Refused("URL_NOT_ALLOWED")
  }
  const testPort = request.test === undefined ? "" : String(request.test.port)
  if (
    url.protocol !== "https:" ||
    url.username !== "" ||
    url.password !== "" ||
    (url.port !== "" && url.port !== testPort) ||
    url.hostname === "" ||
    url.hostname.endsWith(".") ||
    url.hostname.startsWith("[")
  ) {
    throw new Refused("URL_NOT_ALLOWED")
  }
  const host = url.hostname
  const blob =
    request.allowOpenaiBlobHosts && (host === OPENAI_BLOB_DOMAIN || host.endsWith(`.${OPENAI_BLOB_DOMAIN}`))
  if (!blob && !request.allowedHosts.includes(host)) throw new Refused("HOST_NOT_ALLOWED")
  if (isIP(host) !== 0) throw new Refused("HOST_NOT_ALLOWED")
  return url
}

const resolvePublic = async (host: string, resolve: Resolve, request: FetchRequest): Promise<string> => {
  let addresses: ReadonlyArray<string>
  try {
    addresses = await resolve(host)
  } catch {
    throw new Refused("DNS_FAILED")
  }
  const first = addresses[0]
  if (first === undefined) throw new Refused("DNS_FAILED")
  // Every answer must be public, not just the one we pick: a mixed answer is an attack signal.
  const extra = request.test?.publicAddresses ?? []
  if (!addresses.every((a) => isPublicAddress(a, extra))) throw new Refused("ADDRESS_NOT_ALLOWED")
  return first
}

/** A lookup that answers only for the checked host, only with the checked address. */
const pinnedLookup =
  (host: string, address: string): LookupFunction =>
  (hostname, options, callback) => {
    const family = isIP(address)
    if (hostname !== host) {
      const error = Object.assign(new Error("unexpected host"), { code: "ENOTFOUND" })
      if (options.all) callback(error, [])
      else callback(error, "", 0)
      return
    }
    if (options.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }

const REDIRECTS = new Set([301, 302, 303, 307, 308])

const get = (
  url: URL,
  address: string,
  request: FetchRequest,
  signal: AbortSignal
): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const req = https.request({
      protocol: "https:",
      host: url.hostname,
      servername: url.hostname,
      port: url.port === "" ? 443 : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "GET",
      lookup: pinnedLookup(url.hostname, address),
      agent: false,
      rejectUnauthorized: true,
      maxHeaderSize: 16384,
      signal,
      ...(request.test === undefined ? {} : { ca: request.test.caPem }),
      headers: { accept: "*/*", "accept-encoding": "identity", "user-agent": "serverfs-file-ingress" }
    })
    req.once("response", resolve)
    req.once("error", reject)
    req.end()
  })

/**
 * Fetches request.url and hands the body to `sink` chunk by chunk. The caller must discard what
 * it received unless the outcome is ok. Never throws.
 */
export const fetchUrl = async (
  request: FetchRequest,
  sink: (chunk: Buffer) => Promise<void>,
  resolve: Resolve = systemResolve
): Promise<FetchOutcome> => {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), request.fetchTimeoutMs)
  try {
    let url = checkUrl(request.url, request)
    for (let hop = 0; ; hop++) {
      const address = await resolvePublic(url.hostname, resolve, request)
      if (controller.signal.aborted) throw new Refused("FILE_INGRESS_FAILED")
      const response = await get(url, address, request, controller.signal)
      const status = response.statusCode ?? 0
      if (REDIRECTS.has(status)) {
        const location = response.headers.location
        response.destroy()
        if (hop >= request.maxRedirects) throw new Refused("TOO_MANY_REDIRECTS")
        if (location === undefined || location.length > MAX_URL_LENGTH) throw new Refused("UPSTREAM_FAILED")
        let next: URL
        try {
          next = new URL(location, url)
        } catch {
          throw new Refused("URL_NOT_ALLOWED")
        }
        url = checkUrl(next.href, request)
        continue
      }
      if (status !== 200) {
        response.destroy()
        throw new Refused("UPSTREAM_FAILED")
      }
      const encoding = response.headers["content-encoding"]
      if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
        response.destroy()
        throw new Refused("UPSTREAM_FAILED")
      }
      const declared = response.headers["content-length"]
      if (declared !== undefined && Number(declared) > request.maxBytes) {
        response.destroy()
        throw new Refused("BINARY_PAYLOAD_TOO_LARGE")
      }
      let total = 0
      for await (const chunk of response as AsyncIterable<Buffer>) {
        total += chunk.length
        if (total > request.maxBytes) {
          response.destroy()
          throw new Refused("BINARY_PAYLOAD_TOO_LARGE")
        }
        await sink(chunk)
      }
      if (controller.signal.aborted || !response.complete) throw new Refused("FILE_INGRESS_FAILED")
      return { ok: true }
    }
  } catch (e) {
    return { ok: false, code: e instanceof Refused ? e.code : "FILE_INGRESS_FAILED" }
  } finally {
    clearTimeout(timer)
  }
}
