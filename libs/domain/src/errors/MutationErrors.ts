import { Schema } from "effect"
import { location, quoted, shown } from "./Location.js"

/** Errors of the five mutation tools (spec v0.2 §8, tool-contracts §2.7–§2.11). */
const At = { workdir: Schema.String, path: Schema.String }

export class WorkdirReadOnly extends Schema.TaggedError<WorkdirReadOnly>()("WORKDIR_READ_ONLY", {
  workdir: Schema.String
}) {
  override get message() {
    return `${quoted(this.workdir)} is read-only`
  }
}

export class PathAlreadyExists extends Schema.TaggedError<PathAlreadyExists>()("PATH_ALREADY_EXISTS", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — path already exists`
  }
}

export class ParentNotFound extends Schema.TaggedError<ParentNotFound>()("PARENT_NOT_FOUND", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — parent directory does not exist`
  }
}

export class RootMutationNotAllowed extends Schema.TaggedError<RootMutationNotAllowed>()(
  "ROOT_MUTATION_NOT_ALLOWED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — the workdir root cannot be mutated`
  }
}

export class RevisionConflict extends Schema.TaggedError<RevisionConflict>()("REVISION_CONFLICT", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — revision does not match; read the file again`
  }
}

export class EditConflict extends Schema.TaggedError<EditConflict>()("EDIT_CONFLICT", {
  ...At,
  detail: Schema.String
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — ${shown(this.detail)}`
  }
}

export class TooManyEdits extends Schema.TaggedError<TooManyEdits>()("TOO_MANY_EDITS", {
  ...At,
  count: Schema.Int,
  max: Schema.Int
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — ${this.count} edits exceed the limit of ${this.max} per call`
  }
}

export class WriteTooLarge extends Schema.TaggedError<WriteTooLarge>()("WRITE_TOO_LARGE", {
  ...At,
  maxBytes: Schema.Int
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — exceeds the write limit of ${this.maxBytes} bytes`
  }
}

export class BinaryContentNotAllowed extends Schema.TaggedError<BinaryContentNotAllowed>()(
  "BINARY_CONTENT_NOT_ALLOWED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — text must not contain NUL characters or unpaired surrogates`
  }
}

export class MultipleHardlinksNotSupported extends Schema.TaggedError<MultipleHardlinksNotSupported>()(
  "MULTIPLE_HARDLINKS_NOT_SUPPORTED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — file has more than one hard link; an atomic replace would split it`
  }
}

export class MetadataPreservationFailed extends Schema.TaggedError<MetadataPreservationFailed>()(
  "METADATA_PRESERVATION_FAILED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — owner, mode or extended attributes could not be preserved; file unchanged`
  }
}

export class DirectoryNotEmpty extends Schema.TaggedError<DirectoryNotEmpty>()("DIRECTORY_NOT_EMPTY", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — directory is not empty`
  }
}

/** `reason` is an OS strerror text when there is one; an unexpected failure carries none. */
export class MutationIoError extends Schema.TaggedError<MutationIoError>()("MUTATION_IO_ERROR", {
  ...At,
  reason: Schema.optional(Schema.String)
}) {
  override get message() {
    const where = location(this.workdir, this.path)
    return this.reason === undefined ? where : `${where} — the operation failed (${shown(this.reason)})`
  }
}
