#!/usr/bin/env bash
# Builds the serverfs-mcp image: make-rootfs.sh assembles the root filesystem in a temporary
# directory, `podman build` turns it into IMAGE (FROM scratch, nothing pulled). Run from a checkout
# after `npm ci` and `npm run build`. PODMAN may name another engine (e.g. PODMAN=docker).
#
# usage: deploy/container/build-image.sh [IMAGE]     (default localhost/serverfs-mcp:latest)
set -euo pipefail

image=${1:-localhost/serverfs-mcp:latest}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$here/make-rootfs.sh" "$work/rootfs"
"${PODMAN:-podman}" build --quiet --file "$here/Containerfile" --tag "$image" "$work/rootfs"
