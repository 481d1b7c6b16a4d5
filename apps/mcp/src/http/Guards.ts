import { createHash, timingSafeEqual } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"

/**
 * The checks every HTTP request passes before anything else sees it, in the contract's order:
 * Host allowlist (421: DNS rebinding), Origin policy (403: a browser page of another site),
 * bearer token (401). A refusal says which check failed and nothing about the expected values.
 */
export interface GuardPolicy {
  /** Lowercased Host header values. */
  readonly allowedHosts: ReadonlySet<string>
  /** Lowercased origins; a request without Origin (or with an empty one) is not a browser's. */
  readonly allowedOrigins: ReadonlySet<string>
  /** SHA-256 of the token, or undefined when no token is required. */
  readonly tokenDigest: Buffer | undefined
}

export interface Refusal {
  readonly status: 401 | 403 | 421
  readonly message: string
  readonly headers?: Readonly<Record<string, string>>
}

export const digestOf = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

export const guardPolicy = (
  allowedHosts: ReadonlyArray<string>,
  allowedOrigins: ReadonlyArray<string>,
  token: string | undefined
): GuardPolicy => ({
  allowedHosts: new Set(allowedHosts.map((h) => h.toLowerCase())),
  allowedOrigins: new Set(allowedOrigins.map((o) => o.toLowerCase())),
  tokenDigest: token === undefined ? undefined : digestOf(token)
})

const BEARER = /^Bearer +(\S+) *$/i

/**
 * The token check compares SHA-256 digests with timingSafeEqual: equal lengths whatever the
 * client sent, and no early exit that would time how much of the token matched.
 */
const tokenAccepted = (expected: Buffer, authorization: string | undefined): boolean => {
  const presented = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
  const digest = digestOf(presented ?? "")
  return timingSafeEqual(digest, expected) && presented !== undefined
}

export const checkRequest = (policy: GuardPolicy, headers: IncomingHttpHeaders): Refusal | undefined => {
  const host = headers.host?.toLowerCase()
  if (host === undefined || !policy.allowedHosts.has(host)) {
    return { status: 421, message: "Misdirected Request: this Host is not served here" }
  }
  const origin = headers.origin
  if (origin !== undefined && origin !== "" && !policy.allowedOrigins.has(origin.toLowerCase())) {
    return { status: 403, message: "Forbidden: this Origin is not allowed" }
  }
  if (policy.tokenDigest !== undefined && !tokenAccepted(policy.tokenDigest, headers.authorization)) {
    return {
      status: 401,
      message: "Unauthorized: a valid bearer token is required",
      headers: { "www-authenticate": 'Bearer realm="serverfs"' }
    }
  }
  return undefined
}
