// Shared helpers for the @serverfs/posix addon.
//
// Every exported function follows the same rules, enforced here once so that
// the individual call sites cannot forget them:
//   * errors are Node-shaped (code / negative errno / syscall) and NEVER carry
//     the name or path argument: the server's callers must not leak host paths
//     to remote clients through error messages;
//   * string arguments containing NUL (or unpaired UTF-16 surrogates) are
//     rejected, because C would silently truncate them at the NUL and operate
//     on a different name than the one the caller validated;
//   * EINTR is retried, so a signal arriving mid-call never surfaces as a
//     spurious failure that a caller might treat as "refused".
#pragma once

#include <napi.h>

#include <cerrno>
#include <string>

namespace serverfs {

// A Node-shaped Error for `err` (a positive errno value), and the same thrown.
Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall);
[[noreturn]] void ThrowErrno(Napi::Env env, int err, const char* syscall);

// Throws a TypeError with code ERR_INVALID_ARG_TYPE / ERR_INVALID_ARG_VALUE.
// The message names the parameter, never its value.
[[noreturn]] void ThrowArgType(Napi::Env env, const char* param, const char* expected);
[[noreturn]] void ThrowArgValue(Napi::Env env, const char* param, const char* why);

// The "CODE" spelling of an errno value, e.g. "ENOENT".
const char* ErrnoName(int err);

// Argument readers; each throws a TypeError on bad input.
int ArgFd(const Napi::CallbackInfo& info, size_t index, const char* param);
int ArgInt(const Napi::CallbackInfo& info, size_t index, const char* param);
int ArgOptionalInt(const Napi::CallbackInfo& info, size_t index, const char* param, int fallback);
// uid_t / gid_t: accepts 0..2^32-1 and -1 ("leave unchanged").
unsigned int ArgId(const Napi::CallbackInfo& info, size_t index, const char* param);
// A JS string converted to UTF-8. Throws if it contains NUL or an unpaired
// surrogate (which the default N-API conversion would turn into U+FFFD,
// i.e. a different name than the caller checked).
std::string ArgName(const Napi::CallbackInfo& info, size_t index, const char* param);

// Strict UTF-8 check: no overlongs, no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(const char* s, size_t len);

// Runs `f` until it does not fail with EINTR.
template <typename F>
auto RetryEintr(F f) -> decltype(f()) {
  decltype(f()) r;
  do {
    r = f();
  } while (r == -1 && errno == EINTR);
  return r;
}

// Registration hooks, one per source file.
void InitFileOps(Napi::Env env, Napi::Object exports);
void InitReaddir(Napi::Env env, Napi::Object exports);
void InitSockets(Napi::Env env, Napi::Object exports);
void InitXattr(Napi::Env env, Napi::Object exports);

}  // namespace serverfs
