import { At, FrozenErrorClass } from "./FrozenErrorClass.js"
import { location, quoted, shown } from "./Location.js"

/**
 * Errors of workdir lookup, path normalization, the path policy and the descriptor walk
 * (tool-contracts §0, §5). The tag is the frozen code; `message` is the text after `CODE: `.
 */

export class WorkdirNotFound extends FrozenErrorClass("WORKDIR_NOT_FOUND", {
  workdir: "string"
}) {
  override get message() {
    return `${quoted(this.workdir)} is not a configured workdir`
  }
}

export class PathOutsideWorkdir extends FrozenErrorClass("PATH_OUTSIDE_WORKDIR", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — resolved path escapes the workdir`
  }
}

export class ReservedPath extends FrozenErrorClass("RESERVED_PATH", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — path is reserved for ServerFS internals`
  }
}

export class HiddenPathNotAllowed extends FrozenErrorClass("HIDDEN_PATH_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — hidden paths are not allowed in this workdir`
  }
}

export class DeniedPath extends FrozenErrorClass("DENIED_PATH", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — path is denied by policy`
  }
}

export class SymlinkNotAllowed extends FrozenErrorClass("SYMLINK_NOT_ALLOWED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — symbolic links are not followed`
  }
}

export class PathNotFound extends FrozenErrorClass("PATH_NOT_FOUND", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — no such file or directory`
  }
}

export class NotAFile extends FrozenErrorClass("NOT_A_FILE", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — is a directory`
  }
}

export class NotADirectory extends FrozenErrorClass("NOT_A_DIRECTORY", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — not a directory`
  }
}

export class UnsupportedFileType extends FrozenErrorClass("UNSUPPORTED_FILE_TYPE", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — not a regular file (FIFO, socket or device)`
  }
}

/**
 * ACCESS_DENIED carries a short OS reason (strerror text such as "Permission denied") or a fixed
 * phrase ("path contains NUL bytes"); never a host path.
 */
export class AccessDenied extends FrozenErrorClass("ACCESS_DENIED", {
  ...At,
  reason: "string"
}) {
  override get message() {
    return `${location(this.workdir, this.path)} — access denied (${shown(this.reason)})`
  }
}

export class ResourceExhausted extends FrozenErrorClass("RESOURCE_EXHAUSTED", At) {
  override get message() {
    return `${location(this.workdir, this.path)} — the server is out of file descriptors; retry later`
  }
}
