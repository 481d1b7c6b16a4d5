#!/usr/bin/env bash
# Makes the root filesystem of the serverfs-mcp image in OUT_DIR (created, must not exist):
#
#   /usr/local/bin/node          the Node 20 binary that runs this script (no registry image can be
#                                pulled, so the image is FROM scratch plus what the app needs)
#   /lib*/…                      exactly the shared libraries `ldd node` names, and the loader
#   /app/apps/mcp, /app/libs/*   the built dist of serverfs-mcp and the workspace libraries it uses
#   /app/node_modules/…          its production dependency tree only, as `npm ls --omit=dev -w
#                                apps/mcp` resolves it: no dev dependency, no Codex/Claude package
#                                (spec v0.3 §28: the MCP container carries no provider runtime)
#   /etc/passwd, /etc/group      one line each for "nobody", so a library that looks the user up
#                                gets an answer; the container's uid comes from `--user`
#
# No shell, no package manager and no setuid binary end up in the image. Run from a checkout where
# `npm ci` and `npm run build` have run; the Containerfile next to this script copies OUT_DIR in.
#
# usage: deploy/container/make-rootfs.sh OUT_DIR
set -euo pipefail

out=${1:?usage: make-rootfs.sh OUT_DIR}
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -e "$out" ] && { echo "make-rootfs: $out exists; give a new directory" >&2; exit 2; }
[ -f "$repo/apps/mcp/dist/bundle/serverfs-mcp.js" ] || { echo "make-rootfs: apps/mcp/dist is missing; run npm run build" >&2; exit 2; }
[ -f "$repo/libs/posix/build/Release/serverfs_posix.node" ] || { echo "make-rootfs: the posix addon is not built; run npm ci" >&2; exit 2; }

mkdir -p "$out"
out=$(cd "$out" && pwd)

# --- the runtime: node and the libraries its dynamic loader will ask for ----------------------
node_bin=$(readlink -f "$(command -v node)")
install -D -m 0755 "$node_bin" "$out/usr/local/bin/node"
# ldd prints "name => /path (addr)" for libraries and "/path (addr)" for the loader; copy each
# under the path the loader looks up (the soname link), with the real file's content.
ldd "$node_bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
  while read -r lib; do
    install -D -m 0644 "$(readlink -f "$lib")" "$out$lib"
  done
# The loader must be executable; the x86-64 ABI path /lib64 is where the binary asks for it.
find "$out/lib64" "$out/lib" -name 'ld-linux*' -exec chmod 0755 {} + 2>/dev/null || true

# --- the application: workspace packages (dist only) and production dependencies --------------
copy_tree() { # copy_tree SRC DEST: a package directory except nested node_modules, types, maps
  mkdir -p "$2"
  tar -C "$1" --exclude=./node_modules --exclude='*.map' --exclude='*.d.ts' --exclude='*.d.mts' \
    --exclude='*.d.cts' -cf - . | tar -C "$2" -xf -
}
copy_workspace() { # package.json, dist (no maps, no declarations) and a native build if any
  local rel=$1 dest="$out/app/$1"
  install -D -m 0644 "$repo/$rel/package.json" "$dest/package.json"
  tar -C "$repo/$rel" --exclude='*.map' --exclude='*.d.ts' -cf - dist | tar -C "$dest" -xf -
  if [ -d "$repo/$rel/build/Release" ]; then
    mkdir -p "$dest/build/Release"
    find "$repo/$rel/build/Release" -maxdepth 1 -name '*.node' -exec install -m 0644 {} "$dest/build/Release/" \;
  fi
}

mapfile -t packages < <(cd "$repo" && npm ls --omit=dev --all --parseable -w apps/mcp | sort -u)
for path in "${packages[@]}"; do
  rel=${path#"$repo"/}
  if [ "$path" = "$repo" ]; then continue; fi
  case "$rel" in
    node_modules/@serverfs/*)
      # npm links each workspace into node_modules/@serverfs (../../libs/x); keep that layout so
      # resolution, and the realpath Node takes through the link, match the checkout.
      target=$(readlink "$path")
      copy_workspace "${target#../../}"
      mkdir -p "$out/app/node_modules/@serverfs"
      ln -s "$target" "$out/app/$rel" ;;
    *) copy_tree "$path" "$out/app/$rel" ;;
  esac
done
# apps/mcp is the workspace npm ls starts from (it prints it as the link too, but be explicit).
[ -d "$out/app/apps/mcp/dist" ] || copy_workspace apps/mcp
cp "$repo/package.json" "$out/app/package.json"

# The image runs under --user UID:GID; the passwd line only keeps user lookups from failing.
mkdir -p "$out/etc" "$out/tmp"
printf 'nobody:x:65534:65534:nobody:/nonexistent:/nonexistent\n' >"$out/etc/passwd"
printf 'nogroup:x:65534:\n' >"$out/etc/group"
chmod 1777 "$out/tmp"
# Mount points for the workdirs, the bridge socket and the lease locks (bind-mounted at run time).
mkdir -p "$out/workdirs" "$out/run/serverfs-agent-bridge" "$out/run/serverfs-agent-locks"

echo "make-rootfs: $(du -sh "$out" | cut -f1) in $out" >&2
