#!/usr/bin/env bash
# The packages as a user installs them: `npm pack` @palmvein/matcher, its linux-x64-gnu platform
# package and the service; install them into fresh projects without cargo (no Rust toolchain on
# PATH); search with the matcher alone (on the native backend: the platform package's prebuilt
# addon, not WASM), and run `npx palmvein serve` to /healthz.
# Usage: scripts/check-package.sh [<node bin dir> ...] (each directory's `node` runs the check;
# none: the node on PATH).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck source=scripts/pack-packages.sh
source "$root/scripts/pack-packages.sh"

# Searches with @palmvein/matcher in a project and checks the backend it ran on.
search() {
  local project="$1" path="$2" version="$3" backend="$4"
  echo "[package] Node $version: import @palmvein/matcher and search"
  (cd "$project" && PATH="$path" PALMVEIN_MATCHER_BACKEND= node --input-type=module -e "
    import { createMatcher } from '@palmvein/matcher'
    const matcher = await createMatcher({ dimension: 128, threads: 1, logger: (line) => console.log('[package]   ' + line) })
    const gallery = matcher.createGallery()
    const row = (seed) => Int8Array.from({ length: 128 }, (_, i) => ((i * 31 + seed * 17) % 200) - 100)
    for (let seed = 0; seed < 50; seed++) gallery.upsert('person-' + seed, row(seed))
    const [best] = await gallery.search(row(7), { k: 1 })
    await matcher.close()
    if (best.id !== 'person-7' || Math.abs(best.score - 1) > 1e-6) throw new Error('unexpected hit ' + JSON.stringify(best))
    if (matcher.backend.name !== '$backend') throw new Error('searched on ' + matcher.backend.name + ', not $backend')
    console.log('[package]   backend ' + matcher.backend.name + ' (' + matcher.backend.isa + '), best hit ' + best.id + ' ' + best.score.toFixed(4))
  ")
}

node_dirs=("$@")
[ ${#node_dirs[@]} -gt 0 ] || node_dirs=("$(dirname "$(command -v node)")")
port=18790
for node_dir in "${node_dirs[@]}"; do
  # No cargo, no rustc: only this node, npm and the system's basic tools.
  path="$node_dir:$(dirname "$(command -v npm)"):/usr/bin:/bin"
  version="$(PATH="$path" node --version)"
  # The matcher alone: its tarball and the platform package's, nothing of the service.
  alone="$work/matcher-$version"
  mkdir -p "$alone"
  echo "[package] Node $version: npm install @palmvein/matcher and @palmvein/matcher-linux-x64-gnu (no cargo on PATH)"
  (cd "$alone" && PATH="$path" npm init -y >/dev/null && PATH="$path" npm install --no-audit --no-fund "$matcher_tarball" "$platform_tarball" >"$alone/install.log" 2>&1) \
    || { cat "$alone/install.log" >&2; exit 1; }
  [ ! -e "$alone/node_modules/palmvein" ] || { echo "[package] the matcher pulled in the service" >&2; exit 1; }
  search "$alone" "$path" "$version" native

  project="$work/consumer-$version"
  mkdir -p "$project"
  echo "[package] Node $version: npm install the service with the matcher's and the client's tarballs (no cargo on PATH)"
  (cd "$project" && PATH="$path" npm init -y >/dev/null && PATH="$path" npm install --no-audit --no-fund "$tarball" "$matcher_tarball" "$platform_tarball" "$client_tarball" >"$project/install.log" 2>&1) \
    || { cat "$project/install.log" >&2; exit 1; }
  if grep -q '\[build\]\|cargo' "$project/install.log"; then echo "[package] installing rebuilt the package:" >&2; cat "$project/install.log" >&2; exit 1; fi
  search "$project" "$path" "$version" native

  echo "[package] Node $version: npx palmvein serve → /healthz"
  data="$project/data"
  # A session of its own: npx does not pass SIGTERM on to the node it starts, so the whole group is
  # stopped (a serve left running would hold its ports, the metrics port 9464 among them).
  (cd "$project" && PATH="$path" PORT=$port HOST=127.0.0.1 PALMVEIN_DATA_DIR="$data" PALMVEIN_LOG_LEVEL=warn exec setsid npx --no-install palmvein serve >"$project/serve.log" 2>&1) &
  server=$!
  healthy=""
  for _ in $(seq 1 60); do
    if health="$(curl -sf "http://127.0.0.1:$port/healthz")"; then healthy=1; break; fi
    sleep 1
  done
  # The web console ships in the package (packages/console/dist): /console/ is served, not 503.
  console_status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/console/" || true)"
  kill -TERM -- "-$server" 2>/dev/null || kill -TERM "$server" 2>/dev/null || true
  wait "$server" || true
  # The group's last member (node) may outlive the wrapper by its graceful close.
  for _ in $(seq 1 30); do pgrep -g "$server" >/dev/null || break; sleep 0.5; done
  [ -n "$healthy" ] || { echo "[package] /healthz did not answer:" >&2; cat "$project/serve.log" >&2; exit 1; }
  echo "$health" | sed 's/^/[package]   /'
  [ "$console_status" = 200 ] || { echo "[package] /console/ answered $console_status, not 200: the console is not in the package" >&2; exit 1; }
  echo "[package]   /console/ 200 (the console ships in the package)"
  # The install's postinstall patched postgres.js (a lost connection must not end the process).
  if grep -q 'connection-loss guard' "$project/serve.log"; then echo "[package] postgres.js was not patched on install:" >&2; cat "$project/serve.log" >&2; exit 1; fi
  grep -q '/\* palmvein: nextWrite guard \*/' "$project/node_modules/postgres/src/connection.js" \
    || { echo "[package] node_modules/postgres/src/connection.js lacks the guard" >&2; exit 1; }
  echo "[package]   postgres.js carries the connection-loss guard"
  port=$((port + 1))
done
echo "[package] a file: dependency on this checkout (copied, as --install-links does) is not rebuilt"
linked="$work/consumer-file"
mkdir -p "$linked"
(cd "$linked" && npm init -y >/dev/null && npm install --install-links --foreground-scripts --no-audit --no-fund "$root" "$root/packages/matcher" "$root/packages/client" >"$linked/install.log" 2>&1) \
  || { cat "$linked/install.log" >&2; exit 1; }
grep -q 'palmvein is already built; installed as a dependency, it is not rebuilt' "$linked/install.log" \
  && ! grep -q 'Compiling\|tsc -p\|asc assembly' "$linked/install.log" \
  || { echo "[package] the file: dependency was rebuilt:" >&2; cat "$linked/install.log" >&2; exit 1; }
echo "[package] ok"
