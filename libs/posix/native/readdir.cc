// readdir(dirfd): list a directory the caller holds an fd for.
//
// Called for every directory of a large tree walk, so the result crosses the
// N-API boundary in three values, not one call per entry: all valid names
// joined by '/' in one string (the one byte no name can contain, so the JS
// side can split without ambiguity), a Uint8Array of d_type values and the
// count of names dropped as undecodable.

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common.h"

namespace serverfs {

namespace {

Napi::Value Readdir(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int dirfd = ArgFd(info, 0, "dirfd");

  // A fresh open file description: fdopendir() on the caller's own fd would
  // move its shared offset (and closedir() would close it). "." is resolved by
  // the kernel from the fd itself, never from a path string, so a concurrent
  // rename of the directory cannot redirect the listing elsewhere.
  int fd = RetryEintr([&] { return openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) ThrowErrno(env, errno, "openat");
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    close(fd);
    ThrowErrno(env, err, "fdopendir");
  }

  std::string joined;
  std::vector<uint8_t> types;
  uint32_t undecodable = 0;
  int err = 0;
  for (;;) {
    errno = 0;
    struct dirent* ent = readdir(dir);
    if (ent == nullptr) {
      if (errno == EINTR) continue;
      err = errno;  // 0 at end of directory
      break;
    }
    const char* name = ent->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    size_t len = strlen(name);
    // Only strictly valid UTF-8 becomes a JS string: a lossy decode (U+FFFD)
    // would yield a name that, passed back to openat, names a different file
    // or none, and two distinct raw names could collide into one.
    if (!IsValidUtf8(name, len)) {
      undecodable++;
      continue;
    }
    if (!types.empty()) joined.push_back('/');
    joined.append(name, len);
    types.push_back(ent->d_type);
  }
  closedir(dir);  // also closes fd
  if (err != 0) ThrowErrno(env, err, "readdir");

  Napi::Uint8Array typesArray = Napi::Uint8Array::New(env, types.size());
  if (!types.empty()) memcpy(typesArray.Data(), types.data(), types.size());
  Napi::Object result = Napi::Object::New(env);
  result.Set("joined", Napi::String::New(env, joined.data(), joined.size()));
  result.Set("types", typesArray);
  result.Set("undecodable", Napi::Number::New(env, undecodable));
  return result;
}

}  // namespace

void InitReaddir(Napi::Env env, Napi::Object exports) {
  exports.Set("readdir", Napi::Function::New(env, Readdir, "readdir"));
}

}  // namespace serverfs
