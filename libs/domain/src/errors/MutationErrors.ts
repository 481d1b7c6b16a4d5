import { At, FrozenErrorClass } from "./FrozenErrorClass.js"
import { location, quoted, shown } from "./Location.js"

/** Errors of the five mutation tools (spec v0.2 §8, tool-contracts §2.7–§2.11). */

export class WorkdirReadOnly extends FrozenErrorClass("WORKDIR_READ_ONLY", {
  workdir: "string"
}) {
  override get message() {
    return `${quoted(this.workdir)} is read-only`
  }
}

export class PathAlreadyExists extends FrozenErrorClass("PATH_ALREADY_EXISTS", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — path already exists`
  }
}

export class ParentNotFound extends FrozenErrorClass("PARENT_NOT_FOUND", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — parent directory does not exist`
  }
}

export class RootMutationNotAllowed extends FrozenErrorClass("ROOT_MUTATION_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the workdir root cannot be mutated`
  }
}

export class RevisionConflict extends FrozenErrorClass("REVISION_CONFLICT", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — revision does not match; read the file again`
  }
}

export class EditConflict extends FrozenErrorClass("EDIT_CONFLICT", {
  ...At,
  detail: "string"
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — ${shown(this.detail)}`
  }
}

export class TooManyEdits extends FrozenErrorClass("TOO_MANY_EDITS", {
  ...At,
  count: "number",
  max: "number"
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — ${this.count} edits exceed the limit of ${this.max} per call`
  }
}

export class WriteTooLarge extends FrozenErrorClass("WRITE_TOO_LARGE", {
  ...At,
  maxBytes: "number"
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — exceeds the write limit of ${this.maxBytes} bytes`
  }
}

export class BinaryContentNotAllowed extends FrozenErrorClass("BINARY_CONTENT_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — text must not contain NUL characters or unpaired surrogates`
  }
}

export class MultipleHardlinksNotSupported extends FrozenErrorClass("MULTIPLE_HARDLINKS_NOT_SUPPORTED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — file has more than one hard link; an atomic replace would split it`
  }
}

export class MetadataPreservationFailed extends FrozenErrorClass("METADATA_PRESERVATION_FAILED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — owner, mode or extended attributes could not be preserved; file unchanged`
  }
}

export class DirectoryNotEmpty extends FrozenErrorClass("DIRECTORY_NOT_EMPTY", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — directory is not empty`
  }
}

/** `reason` is an OS strerror text when there is one; an unexpected failure carries none. */
export class MutationIoError extends FrozenErrorClass("MUTATION_IO_ERROR", {
  ...At,
  reason: "optional string"
}) {
  override get message() {
    const where = location(this.workdir, this.path)
    return this.reason === undefined ? where : `${where} — the operation failed (${shown(this.reason)})`
  }
}
