import * as fs from "node:fs"
import { Either } from "effect"

export const TOKEN_MIN_BYTES = 16
export const TOKEN_MAX_BYTES = 4096

/**
 * The bearer token of SERVERFS_HTTP_TOKEN_FILE, read once at startup. Refused (a configuration
 * error naming the variable, never the token or the file's content) unless it is a regular file
 * that only its owner may read, holding 16 to 4096 visible ASCII characters (one trailing newline
 * allowed). Opened non-blocking and without following a final symbolic link, so neither a FIFO
 * nor a link swapped in can hang or redirect startup; read to one byte past the limit, so a file
 * that lies about its size is still bounded.
 */
export const readTokenFile = (file: string): Either.Either<string, string> => {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return Either.left(
      code === "ENOENT"
        ? "the named file does not exist"
        : code === "ELOOP"
          ? "the named file is a symbolic link"
          : code === "EACCES" || code === "EPERM"
            ? "the named file cannot be read: permission denied"
            : "the named file cannot be read"
    )
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) return Either.left("the named file is not a regular file")
    // Any group or other permission: the token is as secret as the workdirs it opens.
    if ((stat.mode & 0o077) !== 0) {
      return Either.left("the named file is accessible to group or others (chmod 600 it)")
    }
    const buffer = Buffer.alloc(TOKEN_MAX_BYTES + 2)
    let length = 0
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null)
      if (n === 0 || length + n >= buffer.length) {
        length += n
        break
      }
      length += n
    }
    let text = buffer.subarray(0, length).toString("latin1")
    if (text.endsWith("\n")) text = text.slice(0, -1)
    if (text.endsWith("\r")) text = text.slice(0, -1)
    if (text.length > TOKEN_MAX_BYTES) return Either.left(`the token is longer than ${TOKEN_MAX_BYTES} bytes`)
    if (text.length < TOKEN_MIN_BYTES) {
      return Either.left(
        text.length === 0 ? "the named file is empty" : `the token is shorter than ${TOKEN_MIN_BYTES} bytes`
      )
    }
    if (!/^[\x21-\x7e]+$/.test(text)) {
      return Either.left("the token must be visible ASCII characters only (no spaces or control characters)")
    }
    return Either.right(text)
  } catch {
    return Either.left("the named file cannot be read")
  } finally {
    fs.closeSync(fd)
  }
}
