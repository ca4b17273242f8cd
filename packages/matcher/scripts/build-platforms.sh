#!/usr/bin/env bash
# Builds the prebuilt addon of every platform package (npm/<platform>/palmvein_matcher.<platform>.node)
# on one Linux x64 machine, with cargo-zigbuild: zig links every target (glibc 2.17 for the -gnu
# ones, so the binaries load on old distributions too; musl dynamically, as Node on Alpine is).
# Usage: scripts/build-platforms.sh [<platform> ...]   (none: all four)
# Needs: rustup, and cargo-zigbuild + ziglang (pip) in $ZIG_VENV (default ~/.cache/palmvein-ci/zig;
# created on first use). Release builds use fat LTO: minutes each; run it niced on a shared machine.
set -euo pipefail
package="$(cd "$(dirname "$0")/.." && pwd)"
venv="${ZIG_VENV:-$HOME/.cache/palmvein-ci/zig}"
if [ ! -x "$venv/bin/cargo-zigbuild" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check ziglang cargo-zigbuild
fi
export PATH="$venv/bin:$PATH"

declare -A triples=(
  [linux-x64-gnu]=x86_64-unknown-linux-gnu
  [linux-x64-musl]=x86_64-unknown-linux-musl
  [linux-arm64-gnu]=aarch64-unknown-linux-gnu
  [linux-arm64-musl]=aarch64-unknown-linux-musl
)
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux-x64-gnu linux-x64-musl linux-arm64-gnu linux-arm64-musl)

# A Node addon on musl links musl dynamically: Rust's musl targets link it statically by default.
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"

for platform in "${platforms[@]}"; do
  triple="${triples[$platform]:-}"
  [ -n "$triple" ] || { echo "[platforms] unknown platform $platform (${!triples[*]})" >&2; exit 2; }
  rustup target list --installed | grep -qx "$triple" || rustup target add "$triple"
  # zigbuild takes the glibc version as a suffix of the target.
  zig_target="$triple"
  [[ "$triple" == *-gnu ]] && zig_target="$triple.2.17"
  echo "[platforms] $platform ($zig_target)"
  started=$SECONDS
  (cd "$package/napi" && cargo zigbuild --release --quiet --target "$zig_target" -p palmvein-matcher-node)
  target_dir="$(cd "$package/napi" && cargo metadata --format-version 1 --no-deps | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).target_directory)')"
  cp "$target_dir/$triple/release/libpalmvein_matcher_node.so" "$package/npm/$platform/palmvein_matcher.$platform.node"
  echo "[platforms] $platform: npm/$platform/palmvein_matcher.$platform.node ($((SECONDS - started)) s, $(file -b "$package/npm/$platform/palmvein_matcher.$platform.node" | cut -d, -f1-2))"
done
