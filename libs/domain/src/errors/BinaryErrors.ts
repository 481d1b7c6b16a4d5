import { Schema } from "effect"
import { location, quoted } from "./Location.js"

/**
 * Errors of download_binary_file and upload_binary_file (tool-contracts §2.12–§2.13). Payloads
 * are never part of a message: a bad base64 string is refused without echoing any of it.
 */
const At = { workdir: Schema.String, path: Schema.String }

export class BinaryTransferDisabled extends Schema.TaggedError<BinaryTransferDisabled>()(
  "BINARY_TRANSFER_DISABLED",
  { workdir: Schema.String }
) {
  override get message() {
    return `binary transfer is disabled for ${quoted(this.workdir)}`
  }
}

export class BinaryFileTooLarge extends Schema.TaggedError<BinaryFileTooLarge>()("BINARY_FILE_TOO_LARGE", {
  ...At,
  maxBytes: Schema.Number
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — file exceeds ${this.maxBytes} bytes`
  }
}

export class ExpectedRevisionRequired extends Schema.TaggedError<ExpectedRevisionRequired>()(
  "EXPECTED_REVISION_REQUIRED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — overwrite=true needs expected_revision from stat_file`
  }
}

export class ExpectedRevisionNotAllowed extends Schema.TaggedError<ExpectedRevisionNotAllowed>()(
  "EXPECTED_REVISION_NOT_ALLOWED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — expected_revision is only accepted with overwrite=true`
  }
}

export class BinarySourceRequired extends Schema.TaggedError<BinarySourceRequired>()(
  "BINARY_SOURCE_REQUIRED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — pass data_base64 or file`
  }
}

export class BinarySourceConflict extends Schema.TaggedError<BinarySourceConflict>()(
  "BINARY_SOURCE_CONFLICT",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — pass either data_base64 or file, not both`
  }
}

export class InvalidBase64 extends Schema.TaggedError<InvalidBase64>()("INVALID_BASE64", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — data_base64 is not strict RFC 4648 base64 (A-Z a-z 0-9 + /, "=" padding to a multiple of 4, no whitespace)`
  }
}
