// Extended attributes on an fd the caller already opened (never by path, so
// a symlink swapped in after the walk cannot redirect the read or write).

#if defined(__linux__)
#include <sys/xattr.h>
#endif

#include <algorithm>
#include <cstring>
#include <vector>

#include "common.h"

namespace serverfs {

namespace {

#if defined(__linux__)
// The size query and the read are two syscalls; another process can grow the
// attribute (or add names) in between, and the read then fails with ERANGE.
// Retry with a bigger buffer instead of failing or truncating. Bounded so an
// adversary rewriting the value in a tight loop cannot spin us forever.
constexpr int kMaxAttempts = 16;

template <typename Read>
std::vector<char> ReadGrowing(Napi::Env env, const char* syscallName, Read read) {
  // Start with a guess so the common small case costs one syscall.
  std::vector<char> buf(1024);
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    ssize_t n = RetryEintr([&] { return read(buf.data(), buf.size()); });
    if (n >= 0) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    if (errno != ERANGE) ThrowErrno(env, errno, syscallName);
    ssize_t need = RetryEintr([&] { return read(nullptr, 0); });
    if (need < 0) ThrowErrno(env, errno, syscallName);
    // If it shrank again since the failed read, still grow: it was bigger a
    // moment ago and may be again.
    buf.resize(std::max(static_cast<size_t>(need), buf.size() * 2));
  }
  ThrowErrno(env, ERANGE, syscallName);
}
#endif

Napi::Value Flistxattr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = ArgFd(info, 0, "fd");
#if defined(__linux__)
  std::vector<char> list =
      ReadGrowing(env, "flistxattr", [&](char* buf, size_t size) { return flistxattr(fd, buf, size); });
  Napi::Array names = Napi::Array::New(env);
  uint32_t count = 0;
  size_t i = 0;
  while (i < list.size()) {
    const char* start = list.data() + i;
    size_t len = strnlen(start, list.size() - i);
    // Names that are not valid UTF-8 are dropped: a lossy JS string could not
    // be passed back to fgetxattr to name the same attribute.
    if (len > 0 && IsValidUtf8(start, len)) {
      names.Set(count++, Napi::String::New(env, start, len));
    }
    i += len + 1;
  }
  return names;
#else
  (void)fd;
  ThrowErrno(env, ENOSYS, "flistxattr");
#endif
}

Napi::Value Fgetxattr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = ArgFd(info, 0, "fd");
  std::string name = ArgName(info, 1, "name");
#if defined(__linux__)
  std::vector<char> value = ReadGrowing(
      env, "fgetxattr", [&](char* buf, size_t size) { return fgetxattr(fd, name.c_str(), buf, size); });
  return Napi::Buffer<char>::Copy(env, value.data(), value.size());
#else
  (void)fd;
  ThrowErrno(env, ENOSYS, "fgetxattr");
#endif
}

Napi::Value Fsetxattr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = ArgFd(info, 0, "fd");
  std::string name = ArgName(info, 1, "name");
  if (info.Length() < 3 || !info[2].IsTypedArray() ||
      info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    ThrowArgType(env, "value", "an instance of Buffer or Uint8Array");
  }
  Napi::Uint8Array value = info[2].As<Napi::Uint8Array>();
  int flags = ArgInt(info, 3, "flags");
#if defined(__linux__)
  int r = RetryEintr([&] { return fsetxattr(fd, name.c_str(), value.Data(), value.ByteLength(), flags); });
  if (r < 0) ThrowErrno(env, errno, "fsetxattr");
  return env.Undefined();
#else
  (void)fd, (void)flags, (void)value;
  ThrowErrno(env, ENOSYS, "fsetxattr");
#endif
}

// fremovexattr(2): an edit removes attributes its temp file inherited (a default ACL of the
// directory) that the original did not have, so the replacement holds exactly the original's.
Napi::Value Fremovexattr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = ArgFd(info, 0, "fd");
  std::string name = ArgName(info, 1, "name");
#if defined(__linux__)
  int r = RetryEintr([&] { return fremovexattr(fd, name.c_str()); });
  if (r < 0) ThrowErrno(env, errno, "fremovexattr");
  return env.Undefined();
#else
  (void)fd;
  ThrowErrno(env, ENOSYS, "fremovexattr");
#endif
}

}  // namespace

void InitXattr(Napi::Env env, Napi::Object exports) {
  exports.Set("flistxattr", Napi::Function::New(env, Flistxattr, "flistxattr"));
  exports.Set("fgetxattr", Napi::Function::New(env, Fgetxattr, "fgetxattr"));
  exports.Set("fsetxattr", Napi::Function::New(env, Fsetxattr, "fsetxattr"));
  exports.Set("fremovexattr", Napi::Function::New(env, Fremovexattr, "fremovexattr"));
}

}  // namespace serverfs
