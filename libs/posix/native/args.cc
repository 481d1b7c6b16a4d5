#include <cmath>
#include <cstdint>
#include <vector>

#include "common.h"

namespace serverfs {

namespace {

double ArgIntegerDouble(const Napi::CallbackInfo& info, size_t index, const char* param) {
  if (index >= info.Length() || !info[index].IsNumber()) {
    ThrowArgType(info.Env(), param, "of type number");
  }
  double d = info[index].As<Napi::Number>().DoubleValue();
  // Int32Value() would silently wrap 2^32+3 to 3 or truncate 3.5 to 3: a fd
  // the caller never held. Refuse instead of guessing.
  if (!std::isfinite(d) || std::trunc(d) != d) {
    ThrowArgValue(info.Env(), param, "must be an integer");
  }
  return d;
}

}  // namespace

int ArgInt(const Napi::CallbackInfo& info, size_t index, const char* param) {
  double d = ArgIntegerDouble(info, index, param);
  if (d < INT32_MIN || d > INT32_MAX) {
    ThrowArgValue(info.Env(), param, "is out of the 32-bit integer range");
  }
  return static_cast<int>(d);
}

int ArgFd(const Napi::CallbackInfo& info, size_t index, const char* param) {
  // Negative values other than AT_FDCWD reach the kernel and fail with EBADF,
  // which is the Node-shaped answer callers expect, so no extra check here.
  return ArgInt(info, index, param);
}

int ArgOptionalInt(const Napi::CallbackInfo& info, size_t index, const char* param, int fallback) {
  if (index >= info.Length() || info[index].IsUndefined()) return fallback;
  return ArgInt(info, index, param);
}

unsigned int ArgId(const Napi::CallbackInfo& info, size_t index, const char* param) {
  double d = ArgIntegerDouble(info, index, param);
  if (d == -1) return static_cast<unsigned int>(-1);
  if (d < 0 || d > UINT32_MAX) {
    ThrowArgValue(info.Env(), param, "must be -1 or in the range 0..4294967295");
  }
  return static_cast<unsigned int>(d);
}

std::string ArgName(const Napi::CallbackInfo& info, size_t index, const char* param) {
  if (index >= info.Length() || !info[index].IsString()) {
    ThrowArgType(info.Env(), param, "of type string");
  }
  napi_env env = info.Env();
  napi_value value = info[index];
  size_t units = 0;
  napi_status status = napi_get_value_string_utf16(env, value, nullptr, 0, &units);
  NAPI_THROW_IF_FAILED(env, status, std::string());
  std::vector<char16_t> utf16(units + 1);
  status = napi_get_value_string_utf16(env, value, utf16.data(), utf16.size(), &units);
  NAPI_THROW_IF_FAILED(env, status, std::string());

  // Encode by hand so the checks below see exactly what the kernel will see.
  std::string out;
  out.reserve(units * 3);
  for (size_t i = 0; i < units; i++) {
    uint32_t c = utf16[i];
    if (c == 0) {
      // "safe\0../../etc" would reach the kernel as "safe": refuse.
      ThrowArgValue(info.Env(), param, "must be a string without null bytes");
    }
    if (c >= 0xD800 && c <= 0xDFFF) {
      bool paired = c <= 0xDBFF && i + 1 < units && utf16[i + 1] >= 0xDC00 && utf16[i + 1] <= 0xDFFF;
      if (!paired) {
        // N-API would substitute U+FFFD, silently naming another file.
        ThrowArgValue(info.Env(), param, "must be a well-formed string (no lone surrogates)");
      }
      c = 0x10000 + ((c - 0xD800) << 10) + (utf16[i + 1] - 0xDC00);
      i++;
    }
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

bool IsValidUtf8(const char* s, size_t len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  size_t i = 0;
  while (i < len) {
    unsigned char b = p[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the 2nd byte
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;  // C0/C1 would be overlong encodings of ASCII
    } else if (b == 0xE0) {
      need = 2, lo = 0xA0;  // overlong below U+0800
    } else if (b == 0xED) {
      need = 2, hi = 0x9F;  // U+D800..U+DFFF surrogates
    } else if (b >= 0xE1 && b <= 0xEF) {
      need = 2;
    } else if (b == 0xF0) {
      need = 3, lo = 0x90;  // overlong below U+10000
    } else if (b >= 0xF1 && b <= 0xF3) {
      need = 3;
    } else if (b == 0xF4) {
      need = 3, hi = 0x8F;  // above U+10FFFF
    } else {
      return false;  // stray continuation byte, C0, C1, F5..FF
    }
    if (len - i <= need) return false;
    if (p[i + 1] < lo || p[i + 1] > hi) return false;
    for (size_t k = 2; k <= need; k++) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
    }
    i += need + 1;
  }
  return true;
}

}  // namespace serverfs
