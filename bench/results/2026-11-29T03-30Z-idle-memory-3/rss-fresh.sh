#!/usr/bin/env bash
# usage: rss-fresh.sh [extra node args...]; prints RSS (MiB) at ready, +15 s, +30 s
cd "${PALMVEIN_TREE:-$(git rev-parse --show-toplevel)}"
work=$(mktemp -d); port=$((20000 + RANDOM % 20000))
PALMVEIN_DATA_DIR=$work/data PORT=$port HOST=127.0.0.1 PALMVEIN_LOG_LEVEL=warn node "$@" dist/cli/main.js serve > $work/log 2>&1 & P=$!
for i in $(seq 1 300); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
r() { echo $(( $(awk '/VmRSS/{print $2}' /proc/$P/status) / 1024 )); }
a=$(r); sleep 15; b=$(r); sleep 15; c=$(r)
echo "ready=$a +15s=$b +30s=$c"
grep -E "^(Rss|Pss)" /proc/$P/smaps_rollup | tr '\n' ' '; echo
kill $P; wait $P 2>/dev/null; rm -rf $work
