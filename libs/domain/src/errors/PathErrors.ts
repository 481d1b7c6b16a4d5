import { Schema } from "effect"
import { location, quoted, shown } from "./Location.js"

/**
 * Errors of workdir lookup, path normalization, the path policy and the descriptor walk
 * (tool-contracts §0, §5). The tag is the frozen code; `message` is the text after `CODE: `.
 */
const At = { workdir: Schema.String, path: Schema.String }

export class WorkdirNotFound extends Schema.TaggedError<WorkdirNotFound>()("WORKDIR_NOT_FOUND", {
  workdir: Schema.String
}) {
  override get message() {
    return `${quoted(this.workdir)} is not a configured workdir`
  }
}

export class PathOutsideWorkdir extends Schema.TaggedError<PathOutsideWorkdir>()("PATH_OUTSIDE_WORKDIR", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — resolved path escapes the workdir`
  }
}

export class ReservedPath extends Schema.TaggedError<ReservedPath>()("RESERVED_PATH", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — path is reserved for ServerFS internals`
  }
}

export class HiddenPathNotAllowed extends Schema.TaggedError<HiddenPathNotAllowed>()(
  "HIDDEN_PATH_NOT_ALLOWED",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — hidden paths are not allowed in this workdir`
  }
}

export class DeniedPath extends Schema.TaggedError<DeniedPath>()("DENIED_PATH", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — path is denied by policy`
  }
}

export class SymlinkNotAllowed extends Schema.TaggedError<SymlinkNotAllowed>()("SYMLINK_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — symbolic links are not followed`
  }
}

export class PathNotFound extends Schema.TaggedError<PathNotFound>()("PATH_NOT_FOUND", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — no such file or directory`
  }
}

export class NotAFile extends Schema.TaggedError<NotAFile>()("NOT_A_FILE", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — is a directory`
  }
}

export class NotADirectory extends Schema.TaggedError<NotADirectory>()("NOT_A_DIRECTORY", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — not a directory`
  }
}

export class UnsupportedFileType extends Schema.TaggedError<UnsupportedFileType>()(
  "UNSUPPORTED_FILE_TYPE",
  At
) {
  override get message() {
    return `${location(this.workdir, this.path)} — not a regular file (FIFO, socket or device)`
  }
}

/**
 * ACCESS_DENIED carries a short OS reason (strerror text such as "Permission denied") or a fixed
 * phrase ("path contains NUL bytes"); never a host path.
 */
export class AccessDenied extends Schema.TaggedError<AccessDenied>()("ACCESS_DENIED", {
  ...At,
  reason: Schema.String
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — access denied (${shown(this.reason)})`
  }
}

export class ResourceExhausted extends Schema.TaggedError<ResourceExhausted>()("RESOURCE_EXHAUSTED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the server is out of file descriptors; retry later`
  }
}
