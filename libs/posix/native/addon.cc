// Module entry point: registers the functions and exports the flag constants
// read from this platform's headers, so the TS side never hard-codes a value
// that differs between architectures (O_DIRECTORY, O_NOFOLLOW, O_PATH, ... do).

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>

#if defined(__linux__)
#include <sys/xattr.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif

#include "common.h"

namespace serverfs {

namespace {

// Linux-only values missing from older headers; the numbers are kernel ABI.
#if defined(__linux__)
#ifndef RESOLVE_NO_XDEV
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#define RESOLVE_IN_ROOT 0x10
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#endif

// Flags the platform lacks are exported as 0 so feature code can test for
// them; every call that needs them is itself behind #ifdef __linux__ and
// throws ENOSYS elsewhere.
#ifndef O_PATH
#define O_PATH 0
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_NO_XDEV 0
#define RESOLVE_NO_MAGICLINKS 0
#define RESOLVE_NO_SYMLINKS 0
#define RESOLVE_BENEATH 0
#define RESOLVE_IN_ROOT 0
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 0
#define RENAME_EXCHANGE 0
#endif
#ifndef XATTR_CREATE
#define XATTR_CREATE 0
#define XATTR_REPLACE 0
#endif

void Set(Napi::Env env, Napi::Object o, const char* key, double value) {
  o.Set(key, Napi::Number::New(env, value));
}

Napi::Object Constants(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  Set(env, o, "RDONLY", O_RDONLY);
  Set(env, o, "WRONLY", O_WRONLY);
  Set(env, o, "RDWR", O_RDWR);
  Set(env, o, "CREAT", O_CREAT);
  Set(env, o, "EXCL", O_EXCL);
  Set(env, o, "NOFOLLOW", O_NOFOLLOW);
  Set(env, o, "DIRECTORY", O_DIRECTORY);
  Set(env, o, "NONBLOCK", O_NONBLOCK);
  Set(env, o, "CLOEXEC", O_CLOEXEC);
  Set(env, o, "PATH", O_PATH);
  Set(env, o, "TRUNC", O_TRUNC);
  Set(env, o, "NOCTTY", O_NOCTTY);
  Set(env, o, "APPEND", O_APPEND);

  Napi::Object at = Napi::Object::New(env);
  Set(env, at, "SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW);
  Set(env, at, "REMOVEDIR", AT_REMOVEDIR);
  Set(env, at, "EMPTY_PATH", AT_EMPTY_PATH);
  Set(env, at, "FDCWD", AT_FDCWD);

  Napi::Object resolve = Napi::Object::New(env);
  Set(env, resolve, "BENEATH", RESOLVE_BENEATH);
  Set(env, resolve, "NO_SYMLINKS", RESOLVE_NO_SYMLINKS);
  Set(env, resolve, "NO_MAGICLINKS", RESOLVE_NO_MAGICLINKS);
  Set(env, resolve, "NO_XDEV", RESOLVE_NO_XDEV);
  Set(env, resolve, "IN_ROOT", RESOLVE_IN_ROOT);

  Napi::Object lock = Napi::Object::New(env);
  Set(env, lock, "SH", LOCK_SH);
  Set(env, lock, "EX", LOCK_EX);
  Set(env, lock, "NB", LOCK_NB);
  Set(env, lock, "UN", LOCK_UN);

  Napi::Object rename = Napi::Object::New(env);
  Set(env, rename, "NOREPLACE", RENAME_NOREPLACE);
  Set(env, rename, "EXCHANGE", RENAME_EXCHANGE);

  Napi::Object xattr = Napi::Object::New(env);
  Set(env, xattr, "CREATE", XATTR_CREATE);
  Set(env, xattr, "REPLACE", XATTR_REPLACE);

  Napi::Object dt = Napi::Object::New(env);
  Set(env, dt, "UNKNOWN", DT_UNKNOWN);
  Set(env, dt, "FIFO", DT_FIFO);
  Set(env, dt, "CHR", DT_CHR);
  Set(env, dt, "DIR", DT_DIR);
  Set(env, dt, "BLK", DT_BLK);
  Set(env, dt, "REG", DT_REG);
  Set(env, dt, "LNK", DT_LNK);
  Set(env, dt, "SOCK", DT_SOCK);

  Napi::Object s = Napi::Object::New(env);
  Set(env, s, "IFMT", S_IFMT);
  Set(env, s, "IFREG", S_IFREG);
  Set(env, s, "IFDIR", S_IFDIR);
  Set(env, s, "IFLNK", S_IFLNK);
  Set(env, s, "IFIFO", S_IFIFO);
  Set(env, s, "IFSOCK", S_IFSOCK);
  Set(env, s, "IFCHR", S_IFCHR);
  Set(env, s, "IFBLK", S_IFBLK);

  Napi::Object all = Napi::Object::New(env);
  all.Set("O", o);
  all.Set("AT", at);
  all.Set("RESOLVE", resolve);
  all.Set("LOCK", lock);
  all.Set("RENAME", rename);
  all.Set("XATTR", xattr);
  all.Set("DT", dt);
  all.Set("S", s);
  return all;
}

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("constants", Constants(env));
  InitFileOps(env, exports);
  InitReaddir(env, exports);
  InitSockets(env, exports);
  InitXattr(env, exports);
  return exports;
}

}  // namespace serverfs

// NODE_API_MODULE pastes the name into an identifier, so it must be unqualified.
using serverfs::Init;
NODE_API_MODULE(serverfs_posix, Init)
