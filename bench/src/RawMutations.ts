import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The raw file-system steps of the three mutations, in this process and without any protocol,
 * in two flavours:
 *
 * - durable: the same steps in the same order as the server's create_text_file, edit_text_file
 *   and delete_file (temp file, write, fsync(file), publish, fsync(dir)), with each fsync timed
 *   on its own. These give the cost of the fsyncs on this disk, for the same file size and the
 *   same directory change as the server's;
 * - plain: what @modelcontextprotocol/server-filesystem does, with no fsync at all.
 */
const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants

/** Milliseconds the fsyncs of one durable run took. `fileMs` is 0 when there is no file fsync. */
export interface FsyncTimes {
  readonly fileMs: number
  readonly dirMs: number
}

/** One directory with a descriptor held open for fsync, as the server holds its parent. */
export class RawDirectory {
  readonly fd: number

  constructor(readonly path: string) {
    fs.mkdirSync(path, { recursive: true })
    this.fd = fs.openSync(path, "r")
  }

  join(name: string): string {
    return path.join(this.path, name)
  }

  close(): void {
    fs.closeSync(this.fd)
  }
}

const writeAll = (fd: number, bytes: Uint8Array): void => {
  let done = 0
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done)
}

const timed = (f: () => void): number => {
  const started = performance.now()
  f()
  return performance.now() - started
}

/** A temp file named like the server's, created O_EXCL, written and fsynced; returns its name. */
const durableTemp = (
  dir: RawDirectory,
  bytes: Uint8Array,
  mode: number
): { name: string; fileMs: number } => {
  const name = `.bench-tmp-${randomBytes(8).toString("hex")}`
  const fd = fs.openSync(dir.join(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode)
  try {
    writeAll(fd, bytes)
    return { name, fileMs: timed(() => fs.fsyncSync(fd)) }
  } finally {
    fs.closeSync(fd)
  }
}

/** create_text_file's steps: temp, write, fsync(file), rename into a free name, fsync(dir). */
export const durableCreate = (dir: RawDirectory, name: string, bytes: Uint8Array): FsyncTimes => {
  if (fs.existsSync(dir.join(name))) throw new Error(`${dir.join(name)} exists`)
  const temp = durableTemp(dir, bytes, 0o666)
  fs.renameSync(dir.join(temp.name), dir.join(name))
  return { fileMs: temp.fileMs, dirMs: timed(() => fs.fsyncSync(dir.fd)) }
}

/**
 * edit_text_file's steps: read the file, apply one replacement, temp (0600), write,
 * fsync(file), rename over the original, fsync(dir).
 */
export const durableEdit = (
  dir: RawDirectory,
  name: string,
  oldText: string,
  newText: string
): FsyncTimes => {
  const before = fs.readFileSync(dir.join(name), "utf8")
  if (!before.includes(oldText)) throw new Error(`${dir.join(name)} does not contain ${oldText}`)
  const temp = durableTemp(dir, Buffer.from(before.replace(oldText, newText), "utf8"), 0o600)
  fs.renameSync(dir.join(temp.name), dir.join(name))
  return { fileMs: temp.fileMs, dirMs: timed(() => fs.fsyncSync(dir.fd)) }
}

/** delete_file's steps: unlink, fsync(dir). There is no file fsync. */
export const durableDelete = (dir: RawDirectory, name: string): FsyncTimes => {
  fs.unlinkSync(dir.join(name))
  return { fileMs: 0, dirMs: timed(() => fs.fsyncSync(dir.fd)) }
}

/** server-filesystem's write_file of a new name: writeFile with flag wx, no fsync. */
export const plainCreate = (dir: RawDirectory, name: string, content: string): void =>
  fs.writeFileSync(dir.join(name), content, { encoding: "utf8", flag: "wx" })

/** server-filesystem's edit_file without the diff: read, replace, write a temp file, rename. */
export const plainEdit = (dir: RawDirectory, name: string, oldText: string, newText: string): void => {
  const before = fs.readFileSync(dir.join(name), "utf8")
  if (!before.includes(oldText)) throw new Error(`${dir.join(name)} does not contain ${oldText}`)
  const temp = dir.join(`${name}.${randomBytes(16).toString("hex")}.tmp`)
  fs.writeFileSync(temp, before.replace(oldText, newText), "utf8")
  fs.renameSync(temp, dir.join(name))
}

/** A file created outside the timed part, made durable (fsync(file), then fsync(dir) by the caller). */
export const prepareFile = (dir: RawDirectory, name: string, bytes: Uint8Array): void => {
  const fd = fs.openSync(dir.join(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644)
  try {
    writeAll(fd, bytes)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}
