import {
  fchmod,
  fchown,
  fgetxattr,
  flistxattr,
  fremovexattr,
  fsetxattr,
  fstat,
  type Stat
} from "@serverfs/posix"
import { codeOf } from "../OsError.js"

/**
 * Metadata preservation of edit_text_file (spec v0.2 §6). The replacement gets the original's
 * owner, then its mode, then its extended attributes — in that order, because chown(2) clears
 * setuid/setgid (mode first would lose the `0o2755` bits) and ownership changes can disturb
 * security.* attributes. Attributes the temp file inherited but the original lacks (a
 * directory's default ACL) are removed, so the replacement holds exactly what the original held.
 *
 * The result is then verified — owner, permission bits, and the set and values of attributes —
 * because the kernel may silently drop a bit it refuses (S_ISGID for a group the process is not
 * in), and a silently lost bit, ACL or label would be worse than a refused edit. Attributes this
 * process cannot see at all (trusted.* without CAP_SYS_ADMIN) cannot be preserved or detected;
 * run the server as the workdir's owner or as root where they matter (docs/security-model.md).
 *
 * @throws on any piece that cannot be reproduced
 */
const PERMISSION_BITS = 0o7777

const listXattrs = (fd: number): ReadonlyArray<string> => {
  try {
    return flistxattr(fd)
  } catch (error) {
    // A filesystem without xattr support has none to preserve.
    if (codeOf(error) === "ENOTSUP" || codeOf(error) === "EOPNOTSUPP") return []
    throw error
  }
}

export const copyMetadata = (
  original: { readonly fd: number; readonly stat: Stat },
  tempFd: number
): void => {
  const temp = fstat(tempFd)
  if (temp.uid !== original.stat.uid || temp.gid !== original.stat.gid) {
    fchown(tempFd, original.stat.uid, original.stat.gid)
  }
  fchmod(tempFd, original.stat.mode & PERMISSION_BITS)
  const wanted = new Map(listXattrs(original.fd).map((name) => [name, fgetxattr(original.fd, name)] as const))
  for (const name of listXattrs(tempFd)) if (!wanted.has(name)) fremovexattr(tempFd, name)
  for (const [name, value] of wanted) fsetxattr(tempFd, name, value, 0)

  const result = fstat(tempFd)
  if (
    result.uid !== original.stat.uid ||
    result.gid !== original.stat.gid ||
    (result.mode & PERMISSION_BITS) !== (original.stat.mode & PERMISSION_BITS)
  ) {
    throw new Error("owner or mode was not reproduced")
  }
  const names = listXattrs(tempFd)
  if (
    names.length !== wanted.size ||
    names.some((name) => !wanted.get(name)?.equals(fgetxattr(tempFd, name)))
  ) {
    throw new Error("extended attributes were not reproduced")
  }
}
