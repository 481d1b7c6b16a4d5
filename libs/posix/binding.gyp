# Built by scripts/build-native.mjs (never by a bare `node-gyp rebuild`,
# which may download headers). One target; native/serverfs_posix.cc includes
# the topic files of native/ as a single translation unit (see why there).
{
  "targets": [
    {
      "target_name": "serverfs_posix",
      "sources": ["native/serverfs_posix.cc"],
      # node-addon-api's own target: include dir + NAPI_CPP_EXCEPTIONS and
      # -fexceptions, so a failed syscall can simply `throw` a Node-shaped Error.
      "dependencies": [
        "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"
      ],
      # Node-API 8 (Node >= 12.22 / 14.17 / 15.12): ABI-stable, so the addon
      # does not depend on the exact Node headers version it was built with.
      "defines": ["NAPI_VERSION=8"],
      # Plain C++17 (no GNU dialect); -O2 after node's -O3 wins and compiles faster.
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-O2"],
      "cflags_cc!": ["-std=gnu++17", "-fno-exceptions"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17"
      }
    }
  ]
}
