import { At, FrozenErrorClass } from "./FrozenErrorClass.js"
import { location } from "./Location.js"

/** Errors of the content channels: read_text_file, search_text and the resource (tool-contracts §2.4–§3). */

export class BinaryFile extends FrozenErrorClass("BINARY_FILE", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — file contains NUL bytes and is treated as binary`
  }
}

export class UnsupportedTextEncoding extends FrozenErrorClass("UNSUPPORTED_TEXT_ENCODING", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — content is not valid UTF-8`
  }
}

export class LineTooLarge extends FrozenErrorClass("LINE_TOO_LARGE", {
  ...At,
  line: "number",
  maxBytes: "number"
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — line ${this.line} exceeds ${this.maxBytes} bytes`
  }
}

export class FileChangedDuringRead extends FrozenErrorClass("FILE_CHANGED_DURING_READ", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — changed while being read; retry`
  }
}

export class SearchTimeout extends FrozenErrorClass("SEARCH_TIMEOUT", {
  ...At,
  seconds: "number"
}) {
  override get message() {
    return `search in ${location(this.workdir, this.path)} exceeded ${this.seconds}s`
  }
}

export class SearchFailed extends FrozenErrorClass("SEARCH_FAILED", {}) {
  override get message() {
    return "content search failed."
  }
}

export class ResourceTooLarge extends FrozenErrorClass("RESOURCE_TOO_LARGE", At) {
  override get message() {
    return `${location(this.workdir, this.path)} exceeds the resource read budget; use read_text_file for paginated access`
  }
}

export class ReadFailed extends FrozenErrorClass("READ_FAILED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} could not be read`
  }
}

/**
 * Which work bound of a read was reached: the bytes it may scan to reach and return the
 * requested lines (SERVERFS_MAX_READ_SCAN_BYTES), or its deadline (SERVERFS_READ_TIMEOUT_SECONDS).
 */
export const READ_LIMITS = ["scan_bytes", "deadline"] as const
export type ReadLimit = (typeof READ_LIMITS)[number]

export class ReadLimitExceeded extends FrozenErrorClass("READ_LIMIT_EXCEEDED", {
  ...At,
  limit: { oneOf: READ_LIMITS },
  /** Bytes for scan_bytes, seconds for deadline. */
  value: "number"
}) {
  override get message() {
    return this.limit === "scan_bytes"
      ? `${location(this.workdir, this.path)} — reaching the requested lines needs more than ${this.value} bytes of scanning; start nearer the beginning or read a smaller file`
      : `${location(this.workdir, this.path)} — read exceeded ${this.value}s`
  }
}
