#!/bin/bash
# usage: rss-run.sh <out-dir> [bench args...]: `npm run bench:dedup` at 1M members (register cached in
# /tmp/dedupreg) with the bench process's VmRSS (all its threads), the progress lines so far and the
# phase, sampled every 3 s into <out-dir>/rss.
out=$1; shift
mkdir -p "$out"
node node_modules/.bin/tsx bench/dedup.ts --sizes=1000000 --register-cache=/tmp/dedupreg --progress-lines --out="$out/out.json" "$@" > "$out/log" 2> "$out/err" &
launcher=$!
sleep 2
while kill -0 $launcher 2>/dev/null; do
  # tsx may start node once more: the largest of the launcher's children and grandchildren.
  children=$(pgrep -P $launcher)
  rss=$(for pid in $children $(for child in $children; do pgrep -P $child; done); do awk '/VmRSS/{print $2}' /proc/$pid/status 2>/dev/null; done | sort -n | tail -1)
  echo "$(date +%T) $rss $(grep -c percent "$out/err") $(grep phase "$out/err" | tail -1 | grep -o '"phase":"[a-z]*"')" >> "$out/rss"
  sleep 3
done
wait $launcher
