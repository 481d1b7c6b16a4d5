// flock() and SO_PEERCRED: the two process-to-process primitives the server
// needs (single-instance locks, and knowing which local uid is on the other
// end of its Unix socket without trusting anything the peer says).

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common.h"

namespace serverfs {

namespace {

Napi::Value Flock(const Napi::CallbackInfo& info) {
  int fd = ArgFd(info, 0, "fd");
  int operation = ArgInt(info, 1, "operation");
  // Without LOCK_NB this blocks the calling (JS) thread until the lock is
  // free; callers use LOCK_NB and poll. EWOULDBLOCK == EAGAIN on Linux, so the
  // code surfaces as 'EAGAIN' (see isWouldBlock on the TS side).
  int r = RetryEintr([&] { return flock(fd, operation); });
  if (r < 0) ThrowErrno(info.Env(), errno, "flock");
  return info.Env().Undefined();
}

Napi::Value PeerCred(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = ArgFd(info, 0, "fd");
#if defined(__linux__) && defined(SO_PEERCRED)
  // The kernel records the peer's credentials at connect() time; the peer
  // cannot forge them (unlike anything sent over the socket itself).
  struct ucred cred = {};
  socklen_t len = sizeof cred;
  int r = RetryEintr([&] { return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len); });
  if (r < 0) ThrowErrno(env, errno, "getsockopt");
  Napi::Object o = Napi::Object::New(env);
  o.Set("pid", Napi::Number::New(env, cred.pid));
  o.Set("uid", Napi::Number::New(env, cred.uid));
  o.Set("gid", Napi::Number::New(env, cred.gid));
  return o;
#else
  (void)fd;
  ThrowErrno(env, ENOSYS, "getsockopt");
#endif
}

}  // namespace

void InitSockets(Napi::Env env, Napi::Object exports) {
  exports.Set("flock", Napi::Function::New(env, Flock, "flock"));
  exports.Set("peerCred", Napi::Function::New(env, PeerCred, "peerCred"));
}

}  // namespace serverfs
