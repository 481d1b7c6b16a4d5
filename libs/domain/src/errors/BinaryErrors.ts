import { At, FrozenErrorClass } from "./FrozenErrorClass.js"
import { location, quoted } from "./Location.js"

/**
 * Errors of download_binary_file and upload_binary_file (tool-contracts §2.12–§2.13). Payloads
 * are never part of a message: a bad base64 string is refused without echoing any of it.
 */

export class BinaryTransferDisabled extends FrozenErrorClass("BINARY_TRANSFER_DISABLED", {
  workdir: "string"
}) {
  override get message() {
    return `binary transfer is disabled for ${quoted(this.workdir)}`
  }
}

export class BinaryFileTooLarge extends FrozenErrorClass("BINARY_FILE_TOO_LARGE", {
  ...At,
  maxBytes: "number"
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — file exceeds ${this.maxBytes} bytes`
  }
}

export class ExpectedRevisionRequired extends FrozenErrorClass("EXPECTED_REVISION_REQUIRED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — overwrite=true needs expected_revision from stat_file`
  }
}

export class ExpectedRevisionNotAllowed extends FrozenErrorClass("EXPECTED_REVISION_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — expected_revision is only accepted with overwrite=true`
  }
}

export class BinarySourceRequired extends FrozenErrorClass("BINARY_SOURCE_REQUIRED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — pass data_base64 or file`
  }
}

export class BinarySourceConflict extends FrozenErrorClass("BINARY_SOURCE_CONFLICT", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — pass either data_base64 or file, not both`
  }
}

export class InvalidBase64 extends FrozenErrorClass("INVALID_BASE64", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — data_base64 is not strict RFC 4648 base64 (A-Z a-z 0-9 + /, "=" padding to a multiple of 4, no whitespace)`
  }
}
