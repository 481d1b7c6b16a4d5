// The one translation unit node-gyp compiles ("jumbo" build).
//
// Parsing napi.h/napi-inl.h costs ~1.5 s of CPU per translation unit, more
// than all of our own code; compiling the seven topic files separately took
// ~10 s on a 2-core CI runner, this takes ~4 s. The topic files stay
// separate for reading and review; they are NOT listed in binding.gyp, and
// their file-local helpers live in uniquely named anonymous-namespace
// functions so that including them together cannot collide.
#include "errors.cc"
#include "args.cc"
#include "fileops.cc"
#include "readdir.cc"
#include "sockets.cc"
#include "xattr.cc"
#include "addon.cc"
