#include <string.h>

#include "common.h"

namespace serverfs {

namespace {

struct ErrnoEntry {
  int value;
  const char* name;
};

// Linear table rather than a switch: on Linux several names share a value
// (EAGAIN/EWOULDBLOCK, ENOTSUP/EOPNOTSUPP, EDEADLK/EDEADLOCK) and the first
// entry wins, matching the spelling libuv (and so Node) reports.
#define E(name) {name, #name}
const ErrnoEntry kErrnoTable[] = {
    E(EPERM),        E(ENOENT),      E(ESRCH),        E(EINTR),       E(EIO),
    E(ENXIO),        E(E2BIG),       E(ENOEXEC),      E(EBADF),       E(ECHILD),
    E(EAGAIN),       E(ENOMEM),      E(EACCES),       E(EFAULT),      E(EBUSY),
    E(EEXIST),       E(EXDEV),       E(ENODEV),       E(ENOTDIR),     E(EISDIR),
    E(EINVAL),       E(ENFILE),      E(EMFILE),       E(ENOTTY),      E(ETXTBSY),
    E(EFBIG),        E(ENOSPC),      E(ESPIPE),       E(EROFS),       E(EMLINK),
    E(EPIPE),        E(EDOM),        E(ERANGE),       E(EDEADLK),     E(ENAMETOOLONG),
    E(ENOLCK),       E(ENOSYS),      E(ENOTEMPTY),    E(ELOOP),       E(ENOMSG),
    E(EIDRM),        E(ENOSTR),      E(ENODATA),      E(ETIME),       E(ENOSR),
    E(ENOLINK),      E(EPROTO),      E(EMULTIHOP),    E(EBADMSG),     E(EOVERFLOW),
    E(EILSEQ),       E(ENOTSOCK),    E(EDESTADDRREQ), E(EMSGSIZE),    E(EPROTOTYPE),
    E(ENOPROTOOPT),  E(EPROTONOSUPPORT),              E(ENOTSUP),     E(EOPNOTSUPP),
    E(EAFNOSUPPORT), E(EADDRINUSE),  E(EADDRNOTAVAIL),               E(ENETDOWN),
    E(ENETUNREACH),  E(ENETRESET),   E(ECONNABORTED), E(ECONNRESET),  E(ENOBUFS),
    E(EISCONN),      E(ENOTCONN),    E(ETIMEDOUT),    E(ECONNREFUSED),
    E(EHOSTUNREACH), E(EALREADY),    E(EINPROGRESS),  E(ESTALE),      E(EDQUOT),
    E(ECANCELED),    E(EOWNERDEAD),  E(ENOTRECOVERABLE),
#ifdef EUCLEAN
    E(EUCLEAN),
#endif
#ifdef EREMOTEIO
    E(EREMOTEIO),
#endif
#ifdef EMEDIUMTYPE
    E(EMEDIUMTYPE),
#endif
#ifdef ENOMEDIUM
    E(ENOMEDIUM),
#endif
#ifdef EKEYEXPIRED
    E(EKEYEXPIRED),
#endif
#ifdef EKEYREJECTED
    E(EKEYREJECTED),
#endif
#ifdef ENOKEY
    E(ENOKEY),
#endif
    E(EWOULDBLOCK),
};
#undef E

// strerror() is not thread-safe and strerror_r() has two incompatible
// signatures (GNU returns char*, XSI returns int); overloads pick the right one.
[[maybe_unused]] const char* StrerrorResult(const char* gnu, const char*) { return gnu; }
[[maybe_unused]] const char* StrerrorResult(int xsi, const char* buf) {
  return xsi == 0 ? buf : "Unknown error";
}

std::string Strerror(int err) {
  char buf[256];
  buf[0] = '\0';
  return std::string(StrerrorResult(strerror_r(err, buf, sizeof buf), buf));
}

}  // namespace

const char* ErrnoName(int err) {
  for (const auto& entry : kErrnoTable) {
    if (entry.value == err) return entry.name;
  }
  return "UNKNOWN";
}

Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall) {
  const char* code = ErrnoName(err);
  // Deliberately no path/name here (Node would append it): the server's
  // security model forbids host paths in anything that can reach a client.
  std::string message = std::string(code) + ": " + Strerror(err) + ", " + syscall;
  Napi::Error error = Napi::Error::New(env, message);
  Napi::Object obj = error.Value();
  obj.Set("errno", Napi::Number::New(env, -err));
  obj.Set("code", Napi::String::New(env, code));
  obj.Set("syscall", Napi::String::New(env, syscall));
  return error;
}

void ThrowErrno(Napi::Env env, int err, const char* syscall) { throw ErrnoError(env, err, syscall); }

void ThrowArgType(Napi::Env env, const char* param, const char* expected) {
  std::string message = std::string("The \"") + param + "\" argument must be " + expected;
  Napi::Error error = Napi::TypeError::New(env, message);
  error.Value().Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  throw error;
}

void ThrowArgValue(Napi::Env env, const char* param, const char* why) {
  // The offending value is never echoed: it may be a host path.
  std::string message = std::string("The \"") + param + "\" argument " + why;
  Napi::Error error = Napi::TypeError::New(env, message);
  error.Value().Set("code", Napi::String::New(env, "ERR_INVALID_ARG_VALUE"));
  throw error;
}

}  // namespace serverfs
