import { At, FrozenErrorClass } from "./FrozenErrorClass.js"
import { location } from "./Location.js"

/**
 * Errors of upload_binary_file's `file` source (tool-contracts §2.13): the ChatGPT file ingress.
 * The download URL is never part of a message (it carries a signed token); the location is the
 * caller's destination, `<workdir>:<path>`.
 */

export class FileIngressDisabled extends FrozenErrorClass("FILE_INGRESS_DISABLED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — file ingress is disabled on this server; send data_base64`
  }
}

export class FileIngressUnavailable extends FrozenErrorClass("FILE_INGRESS_UNAVAILABLE", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the file ingress could not be reached`
  }
}

export class FileIngressFailed extends FrozenErrorClass("FILE_INGRESS_FAILED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the file could not be fetched`
  }
}

export class UrlNotAllowed extends FrozenErrorClass("URL_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the download URL is not an allowed https URL`
  }
}

export class HostNotAllowed extends FrozenErrorClass("HOST_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the download host is not allowed`
  }
}

export class AddressNotAllowed extends FrozenErrorClass("ADDRESS_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the download host resolves to a private or local address`
  }
}

export class DnsFailed extends FrozenErrorClass("DNS_FAILED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the download host could not be resolved`
  }
}

export class TooManyRedirects extends FrozenErrorClass("TOO_MANY_REDIRECTS", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the download redirected too many times`
  }
}

export class UpstreamFailed extends FrozenErrorClass("UPSTREAM_FAILED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the download server answered with an error`
  }
}

/** Decoded or fetched bytes over the workdir's max_binary_transfer_bytes. */
export class BinaryPayloadTooLarge extends FrozenErrorClass("BINARY_PAYLOAD_TOO_LARGE", {
  ...At,
  maxBytes: "number"
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — payload exceeds ${this.maxBytes} bytes`
  }
}

/** What fetching a `file` source can fail with (besides BINARY_PAYLOAD_TOO_LARGE). */
export type FileIngressError =
  | FileIngressUnavailable
  | FileIngressFailed
  | UrlNotAllowed
  | HostNotAllowed
  | AddressNotAllowed
  | DnsFailed
  | TooManyRedirects
  | UpstreamFailed
