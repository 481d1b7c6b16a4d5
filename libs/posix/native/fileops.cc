// The *at() family: every name is resolved relative to a directory fd the
// caller already holds, so no absolute host path is ever re-resolved (the
// TOCTOU hole of path-based APIs such as fs.readFileSync).

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__linux__)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif

#include <cstdint>

#include "common.h"

namespace serverfs {

namespace {

#if defined(__linux__)
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_renameat2
#define SYS_renameat2 316
#endif
#ifndef RESOLVE_BENEATH
struct open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#endif
#endif

// ns = sec * 1e9 + nsec without signed overflow: st_mtime is settable by any
// file owner (utimensat) to values whose product overflows int64.
Napi::BigInt TimeNs(Napi::Env env, int64_t sec, long nsec) {
  __int128 ns = static_cast<__int128>(sec) * 1000000000 + nsec;
  int sign = ns < 0 ? 1 : 0;
  unsigned __int128 mag = ns < 0 ? -static_cast<unsigned __int128>(ns) : static_cast<unsigned __int128>(ns);
  uint64_t words[2] = {static_cast<uint64_t>(mag), static_cast<uint64_t>(mag >> 64)};
  return Napi::BigInt::New(env, sign, words[1] == 0 ? 1 : 2, words);
}

Napi::Object StatObject(Napi::Env env, const struct stat& st) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("dev", Napi::BigInt::New(env, static_cast<uint64_t>(st.st_dev)));
  o.Set("ino", Napi::BigInt::New(env, static_cast<uint64_t>(st.st_ino)));
  o.Set("mode", Napi::Number::New(env, st.st_mode));
  o.Set("nlink", Napi::Number::New(env, static_cast<double>(st.st_nlink)));
  o.Set("uid", Napi::Number::New(env, st.st_uid));
  o.Set("gid", Napi::Number::New(env, st.st_gid));
  o.Set("size", Napi::Number::New(env, static_cast<double>(st.st_size)));
  o.Set("mtimeNs", TimeNs(env, st.st_mtim.tv_sec, st.st_mtim.tv_nsec));
  o.Set("ctimeNs", TimeNs(env, st.st_ctim.tv_sec, st.st_ctim.tv_nsec));
  o.Set("atimeNs", TimeNs(env, st.st_atim.tv_sec, st.st_atim.tv_nsec));
  o.Set("blocks", Napi::Number::New(env, static_cast<double>(st.st_blocks)));
  return o;
}

Napi::Value Openat(const Napi::CallbackInfo& info) {
  int dirfd = ArgFd(info, 0, "dirfd");
  std::string name = ArgName(info, 1, "name");
  int flags = ArgInt(info, 2, "flags");
  int mode = ArgOptionalInt(info, 3, "mode", 0);
  // O_CLOEXEC always: a child spawned by the server must never inherit a
  // directory fd that lets it reach outside its own sandbox.
  int fd = RetryEintr([&] { return openat(dirfd, name.c_str(), flags | O_CLOEXEC, static_cast<mode_t>(mode)); });
  if (fd < 0) ThrowErrno(info.Env(), errno, "openat");
  return Napi::Number::New(info.Env(), fd);
}

Napi::Value Openat2(const Napi::CallbackInfo& info) {
  int dirfd = ArgFd(info, 0, "dirfd");
  std::string path = ArgName(info, 1, "path");
  int flags = ArgInt(info, 2, "flags");
  int mode = ArgInt(info, 3, "mode");
  int resolve = ArgInt(info, 4, "resolve");
#if defined(__linux__)
  struct open_how how = {};
  // Zero-extend: sign-extending a negative int would set high flag bits the
  // kernel rejects with EINVAL anyway, but be explicit.
  how.flags = static_cast<uint32_t>(flags | O_CLOEXEC);
  how.mode = static_cast<uint32_t>(mode);
  how.resolve = static_cast<uint32_t>(resolve);
  long fd = RetryEintr([&] { return syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how); });
  if (fd < 0) ThrowErrno(info.Env(), errno, "openat2");
  return Napi::Number::New(info.Env(), static_cast<double>(fd));
#else
  (void)dirfd, (void)flags, (void)mode, (void)resolve;
  ThrowErrno(info.Env(), ENOSYS, "openat2");
#endif
}

Napi::Value Fstatat(const Napi::CallbackInfo& info) {
  int dirfd = ArgFd(info, 0, "dirfd");
  std::string name = ArgName(info, 1, "name");
  int flags = ArgInt(info, 2, "flags");
  struct stat st;
  int r = RetryEintr([&] { return fstatat(dirfd, name.c_str(), &st, flags); });
  if (r < 0) ThrowErrno(info.Env(), errno, "fstatat");
  return StatObject(info.Env(), st);
}

// fstatat of many names below one directory fd in one crossing of N-API (list_directory stats
// up to a page of entries: one Stat object with five BigInts per entry cost more than the
// syscall). Names come joined by "/", the one byte no name can hold, `count` of them; each entry
// gets four doubles: mode, size, mtime seconds (st_mtim.tv_sec, exact below 2^53) and errno
// (0 when the stat succeeded). An empty name, "." or ".." gets EINVAL: only entries of the
// directory itself are ever stat'ed.
Napi::Value FstatatEntries(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int dirfd = ArgFd(info, 0, "dirfd");
  std::string joined = ArgName(info, 1, "names");
  int flags = ArgInt(info, 2, "flags");
  int count = ArgInt(info, 3, "count");
  if (count < 0) ThrowArgValue(env, "count", "must not be negative");
  Napi::Float64Array out = Napi::Float64Array::New(env, static_cast<size_t>(count) * 4);
  double* cells = out.Data();
  size_t start = 0;
  for (int i = 0; i < count; i++) {
    size_t end = joined.find('/', start);
    bool last = i == count - 1;
    if ((end == std::string::npos) != last) ThrowArgValue(env, "names", "does not hold count names");
    if (last) end = joined.size();
    std::string name = joined.substr(start, end - start);
    start = end + 1;
    double* cell = cells + static_cast<size_t>(i) * 4;
    if (name.empty() || name == "." || name == "..") {
      cell[0] = cell[1] = cell[2] = 0;
      cell[3] = EINVAL;
      continue;
    }
    struct stat st;
    int r = RetryEintr([&] { return fstatat(dirfd, name.c_str(), &st, flags); });
    cell[0] = r < 0 ? 0 : st.st_mode;
    cell[1] = r < 0 ? 0 : static_cast<double>(st.st_size);
    cell[2] = r < 0 ? 0 : static_cast<double>(st.st_mtim.tv_sec);
    cell[3] = r < 0 ? errno : 0;
  }
  return out;
}

Napi::Value Fstat(const Napi::CallbackInfo& info) {
  int fd = ArgFd(info, 0, "fd");
  struct stat st;
  int r = RetryEintr([&] { return fstat(fd, &st); });
  if (r < 0) ThrowErrno(info.Env(), errno, "fstat");
  return StatObject(info.Env(), st);
}

Napi::Value Linkat(const Napi::CallbackInfo& info) {
  int olddirfd = ArgFd(info, 0, "olddirfd");
  std::string oldname = ArgName(info, 1, "oldname");
  int newdirfd = ArgFd(info, 2, "newdirfd");
  std::string newname = ArgName(info, 3, "newname");
  int flags = ArgInt(info, 4, "flags");
  // linkat() never replaces an existing newname (EEXIST), which is what makes
  // it usable for "publish a temp file without clobbering".
  int r = RetryEintr([&] { return linkat(olddirfd, oldname.c_str(), newdirfd, newname.c_str(), flags); });
  if (r < 0) ThrowErrno(info.Env(), errno, "linkat");
  return info.Env().Undefined();
}

Napi::Value Renameat(const Napi::CallbackInfo& info) {
  int olddirfd = ArgFd(info, 0, "olddirfd");
  std::string oldname = ArgName(info, 1, "oldname");
  int newdirfd = ArgFd(info, 2, "newdirfd");
  std::string newname = ArgName(info, 3, "newname");
  int r = RetryEintr([&] { return renameat(olddirfd, oldname.c_str(), newdirfd, newname.c_str()); });
  if (r < 0) ThrowErrno(info.Env(), errno, "renameat");
  return info.Env().Undefined();
}

Napi::Value Renameat2(const Napi::CallbackInfo& info) {
  int olddirfd = ArgFd(info, 0, "olddirfd");
  std::string oldname = ArgName(info, 1, "oldname");
  int newdirfd = ArgFd(info, 2, "newdirfd");
  std::string newname = ArgName(info, 3, "newname");
  int flags = ArgInt(info, 4, "flags");
#if defined(__linux__)
  // Raw syscall: glibc only wraps renameat2 since 2.28 and musl not at all.
  long r = RetryEintr([&] {
    return syscall(SYS_renameat2, olddirfd, oldname.c_str(), newdirfd, newname.c_str(), static_cast<unsigned>(flags));
  });
  if (r < 0) ThrowErrno(info.Env(), errno, "renameat2");
  return info.Env().Undefined();
#else
  (void)olddirfd, (void)newdirfd, (void)flags;
  ThrowErrno(info.Env(), ENOSYS, "renameat2");
#endif
}

Napi::Value Unlinkat(const Napi::CallbackInfo& info) {
  int dirfd = ArgFd(info, 0, "dirfd");
  std::string name = ArgName(info, 1, "name");
  int flags = ArgInt(info, 2, "flags");
  int r = RetryEintr([&] { return unlinkat(dirfd, name.c_str(), flags); });
  if (r < 0) ThrowErrno(info.Env(), errno, "unlinkat");
  return info.Env().Undefined();
}

Napi::Value Mkdirat(const Napi::CallbackInfo& info) {
  int dirfd = ArgFd(info, 0, "dirfd");
  std::string name = ArgName(info, 1, "name");
  int mode = ArgInt(info, 2, "mode");
  int r = RetryEintr([&] { return mkdirat(dirfd, name.c_str(), static_cast<mode_t>(mode)); });
  if (r < 0) ThrowErrno(info.Env(), errno, "mkdirat");
  return info.Env().Undefined();
}

Napi::Value Symlinkat(const Napi::CallbackInfo& info) {
  std::string target = ArgName(info, 0, "target");
  int newdirfd = ArgFd(info, 1, "newdirfd");
  std::string linkname = ArgName(info, 2, "linkname");
  int r = RetryEintr([&] { return symlinkat(target.c_str(), newdirfd, linkname.c_str()); });
  if (r < 0) ThrowErrno(info.Env(), errno, "symlinkat");
  return info.Env().Undefined();
}

Napi::Value Mkfifoat(const Napi::CallbackInfo& info) {
  int dirfd = ArgFd(info, 0, "dirfd");
  std::string name = ArgName(info, 1, "name");
  int mode = ArgInt(info, 2, "mode");
  int r = RetryEintr([&] { return mkfifoat(dirfd, name.c_str(), static_cast<mode_t>(mode)); });
  if (r < 0) ThrowErrno(info.Env(), errno, "mkfifoat");
  return info.Env().Undefined();
}

Napi::Value Fsync(const Napi::CallbackInfo& info) {
  int fd = ArgFd(info, 0, "fd");
  int r = RetryEintr([&] { return fsync(fd); });
  if (r < 0) ThrowErrno(info.Env(), errno, "fsync");
  return info.Env().Undefined();
}

Napi::Value Close(const Napi::CallbackInfo& info) {
  int fd = ArgFd(info, 0, "fd");
  // NOT retried on EINTR: Linux releases the descriptor before returning
  // EINTR, so a retry could close an fd another thread just opened under the
  // same number. The fd is gone either way, so EINTR counts as success.
  int r = close(fd);
  if (r < 0 && errno != EINTR) ThrowErrno(info.Env(), errno, "close");
  return info.Env().Undefined();
}

Napi::Value Fchown(const Napi::CallbackInfo& info) {
  int fd = ArgFd(info, 0, "fd");
  uid_t uid = static_cast<uid_t>(ArgId(info, 1, "uid"));
  gid_t gid = static_cast<gid_t>(ArgId(info, 2, "gid"));
  int r = RetryEintr([&] { return fchown(fd, uid, gid); });
  if (r < 0) ThrowErrno(info.Env(), errno, "fchown");
  return info.Env().Undefined();
}

Napi::Value Fchmod(const Napi::CallbackInfo& info) {
  int fd = ArgFd(info, 0, "fd");
  int mode = ArgInt(info, 1, "mode");
  int r = RetryEintr([&] { return fchmod(fd, static_cast<mode_t>(mode)); });
  if (r < 0) ThrowErrno(info.Env(), errno, "fchmod");
  return info.Env().Undefined();
}

}  // namespace

void InitFileOps(Napi::Env env, Napi::Object exports) {
  exports.Set("openat", Napi::Function::New(env, Openat, "openat"));
  exports.Set("openat2", Napi::Function::New(env, Openat2, "openat2"));
  exports.Set("fstatat", Napi::Function::New(env, Fstatat, "fstatat"));
  exports.Set("fstat", Napi::Function::New(env, Fstat, "fstat"));
  exports.Set("fstatatEntries", Napi::Function::New(env, FstatatEntries, "fstatatEntries"));
  exports.Set("linkat", Napi::Function::New(env, Linkat, "linkat"));
  exports.Set("renameat", Napi::Function::New(env, Renameat, "renameat"));
  exports.Set("renameat2", Napi::Function::New(env, Renameat2, "renameat2"));
  exports.Set("unlinkat", Napi::Function::New(env, Unlinkat, "unlinkat"));
  exports.Set("mkdirat", Napi::Function::New(env, Mkdirat, "mkdirat"));
  exports.Set("symlinkat", Napi::Function::New(env, Symlinkat, "symlinkat"));
  exports.Set("mkfifoat", Napi::Function::New(env, Mkfifoat, "mkfifoat"));
  exports.Set("fsync", Napi::Function::New(env, Fsync, "fsync"));
  exports.Set("close", Napi::Function::New(env, Close, "close"));
  exports.Set("fchown", Napi::Function::New(env, Fchown, "fchown"));
  exports.Set("fchmod", Napi::Function::New(env, Fchmod, "fchmod"));
}

}  // namespace serverfs
