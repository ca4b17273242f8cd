#!/usr/bin/env bash
# `npm pack` of what a user installs: @palmvein/matcher, its linux-x64-gnu platform package (the
# prebuilt addon), @palmvein/client and the service, each checked to hold its files and no sources.
# Sourced by scripts/check-package.sh and scripts/check-container.sh with $root (the checkout) and
# $work (where the tarballs go) set; leaves their paths in matcher_tarball, platform_tarball,
# client_tarball and tarball.
# Run by itself: scripts/pack-packages.sh <directory> (the Dockerfile's build/container, say).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -eq 1 ] || { echo "usage: scripts/pack-packages.sh <directory>" >&2; exit 2; }
  root="$(cd "$(dirname "$0")/.." && pwd)"
  mkdir -p "$1" && work="$(cd "$1" && pwd)"
fi
# PALMVEIN_PACK_AS_BUILT=1: pack the checkout as it is built (npm pack runs no prepare, which
# would build everything again: minutes); the listings below still check the build is there.
pack() { (cd "$1" && npm pack --silent ${PALMVEIN_PACK_AS_BUILT:+--ignore-scripts} --pack-destination "$work" | tail -1 | sed "s#^#$work/#"); }
# Each tarball must hold these files and no sources.
check_listing() {
  local tarball="$1" leaked="$2"; shift 2
  local listing; listing="$(tar tzf "$tarball")"
  for file in "$@"; do
    grep -qx "package/$file" <<<"$listing" || { echo "[package] $file is missing from $(basename "$tarball")" >&2; exit 1; }
  done
  if grep -q "$leaked" <<<"$listing"; then echo "[package] sources leaked into $(basename "$tarball"):" >&2; grep "$leaked" <<<"$listing" >&2; exit 1; fi
  echo "[package] $(basename "$tarball"): $(wc -l <<<"$listing") files, $(du -h "$tarball" | cut -f1)"
}

echo "[package] npm pack (the matcher, its linux-x64-gnu platform package, the client, the service)"
platform_dir="$root/packages/matcher/npm/linux-x64-gnu"
[ -f "$platform_dir/palmvein_matcher.linux-x64-gnu.node" ] \
  || { echo "[package] $platform_dir has no addon: build it (npm install, or npm run build:platforms in packages/matcher)" >&2; exit 1; }
matcher_tarball="$(pack "$root/packages/matcher")"
check_listing "$matcher_tarball" '^package/native/\|^package/napi/\|^package/test/\|^package/bench/' \
  dist/index.js dist/index.d.ts dist/worker.js dist/backend.js build/matcher.wasm src/webassembly.d.ts README.md
# The one source file it ships is the WebAssembly typings dist/*.d.ts reference.
if tar tzf "$matcher_tarball" | grep '^package/src/' | grep -qv '^package/src/webassembly.d.ts$'; then echo "[package] sources in the matcher tarball" >&2; exit 1; fi
platform_tarball="$(pack "$platform_dir")"
check_listing "$platform_tarball" '^package/src/' palmvein_matcher.linux-x64-gnu.node package.json
# The client (palmvein terminal runs on it; the service depends on it).
client_tarball="$(pack "$root/packages/client")"
check_listing "$client_tarball" '^package/src/\|^package/test/' dist/index.js dist/index.d.ts README.md
tarball="$(pack "$root")"
# Of the workspace packages, only the built console ships in the service (served at /console/).
check_listing "$tarball" '^package/src/\|^package/crates/\|^package/test/\|^package/packages/[^c]\|^package/packages/console/[^d]' dist/cli/main.js packages/console/dist/index.html
