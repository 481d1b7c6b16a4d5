// readdir(dirfd) / readdirAsync(dirfd): list a directory the caller holds an fd for.
//
// Called for every directory of a large tree walk, so the result crosses the
// N-API boundary in three values, not one call per entry: all valid names
// joined by '/' in one string (the one byte no name can contain, so the JS
// side can split without ambiguity), a Uint8Array of d_type values and the
// count of names dropped as undecodable.
//
// readdirAsync does the reading on the libuv thread pool and settles a
// Promise: listing a directory of 200,000 entries must not hold the event
// loop (issue 14). The private fd is opened synchronously, before the call
// returns, so the caller may close its own fd at any time afterwards (an
// interrupted listing) without the worker ever reading a reused fd number.

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common.h"

namespace serverfs {

namespace {

struct Listing {
  std::string joined;
  std::vector<uint8_t> types;
  uint32_t undecodable = 0;
};

// A fresh open file description: fdopendir() on the caller's own fd would
// move its shared offset (and closedir() would close it). "." is resolved by
// the kernel from the fd itself, never from a path string, so a concurrent
// rename of the directory cannot redirect the listing elsewhere.
int OpenPrivate(int dirfd) { return RetryEintr([&] { return openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); }); }

// Reads the whole directory of `fd` (which it closes) into `out`. Returns 0
// or an errno value, with `*syscall` naming the call that failed. Touches no
// JS value, so it may run on a worker thread.
int ReadAll(int fd, Listing* out, const char** syscall) {
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    close(fd);
    *syscall = "fdopendir";
    return err;
  }
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
      out->undecodable++;
      continue;
    }
    if (!out->types.empty()) out->joined.push_back('/');
    out->joined.append(name, len);
    out->types.push_back(ent->d_type);
  }
  closedir(dir);  // also closes fd
  *syscall = "readdir";
  return err;
}

Napi::Object ToJs(Napi::Env env, const Listing& listing) {
  Napi::Uint8Array typesArray = Napi::Uint8Array::New(env, listing.types.size());
  if (!listing.types.empty()) memcpy(typesArray.Data(), listing.types.data(), listing.types.size());
  Napi::Object result = Napi::Object::New(env);
  result.Set("joined", Napi::String::New(env, listing.joined.data(), listing.joined.size()));
  result.Set("types", typesArray);
  result.Set("undecodable", Napi::Number::New(env, listing.undecodable));
  return result;
}

Napi::Value Readdir(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int dirfd = ArgFd(info, 0, "dirfd");
  int fd = OpenPrivate(dirfd);
  if (fd < 0) ThrowErrno(env, errno, "openat");
  Listing listing;
  const char* syscall = "readdir";
  int err = ReadAll(fd, &listing, &syscall);
  if (err != 0) ThrowErrno(env, err, syscall);
  return ToJs(env, listing);
}

class ReaddirWorker : public Napi::AsyncWorker {
 public:
  ReaddirWorker(Napi::Env env, int fd)
      : Napi::AsyncWorker(env, "serverfs.readdir"), fd_(fd), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override { err_ = ReadAll(fd_, &listing_, &syscall_); }

  void OnOK() override {
    Napi::Env env = Env();
    if (err_ != 0) {
      deferred_.Reject(ErrnoError(env, err_, syscall_).Value());
    } else {
      deferred_.Resolve(ToJs(env, listing_));
    }
  }

  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  int fd_;
  Napi::Promise::Deferred deferred_;
  Listing listing_;
  const char* syscall_ = "readdir";
  int err_ = 0;
};

Napi::Value ReaddirAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int dirfd = ArgFd(info, 0, "dirfd");
  int fd = OpenPrivate(dirfd);
  if (fd < 0) ThrowErrno(env, errno, "openat");
  auto* worker = new ReaddirWorker(env, fd);  // deleted by N-API after OnOK/OnError
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace

void InitReaddir(Napi::Env env, Napi::Object exports) {
  exports.Set("readdir", Napi::Function::New(env, Readdir, "readdir"));
  exports.Set("readdirAsync", Napi::Function::New(env, ReaddirAsync, "readdirAsync"));
}

}  // namespace serverfs
