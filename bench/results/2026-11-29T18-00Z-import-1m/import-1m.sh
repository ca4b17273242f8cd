#!/bin/bash
# usage: import-1m.sh <mode> <candidates.ndjson> <out-prefix> [import args]
# Imports the candidates into the seeded 1M-member PostgreSQL environment (million.sh's, its
# earlier candidates deleted first, the project's headcount raised to 2M) with the duplicate
# search <mode> (exact or cells). Output: <out>.progress (seconds since start, the import
# process's CPU-s, its progress line), <out>.rejects.ndjson, <out>.summary.json. With PERF_AFTER=n,
# perf records the process for 12 s from the first progress line at n lines or more (after the
# cell index is built): <out>.perf.data, JavaScript frames named (--perf-basic-prof-only-functions).
set -e
cd "$(dirname "$0")/../../.."
mode=$1; file=$2; out=$3; shift 3
d=scratch/pg-1000000
export PGPASSWORD=postgres
psql -q -h 127.0.0.1 -U postgres -d importsearch_1000000 -c "DELETE FROM members WHERE display_name LIKE 'candidate %'" -c "UPDATE projects SET headcount = 2000000" >/dev/null
project=$(node -e "console.log(JSON.parse(require('fs').readFileSync('$d/seed.json')).project_id)")
tck=$(getconf CLK_TCK)
fifo=$(mktemp -u); mkfifo $fifo
: > $out.progress
echo "$(grep -m1 'model name' /proc/cpuinfo) load-before $(cut -d' ' -f1-3 /proc/loadavg)" >> $out.progress
start=$(date +%s.%N)
env $(cat $d/env) node ${PERF_AFTER:+--perf-basic-prof-only-functions} dist/cli/main.js import --project $project --duplicate-search $mode --progress-lines --rejects $out.rejects.ndjson "$@" $file > $out.summary.json 2> $fifo &
P=$!
perfpid=
while IFS= read -r l; do
  cpu=$(awk -v t=$tck '{printf "%.1f", ($14+$15)/t}' /proc/$P/stat 2>/dev/null)
  echo "$(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') cpu=$cpu $l" >> $out.progress
  handled=$(echo "$l" | sed -n 's/.*"handled":\([0-9]*\).*/\1/p')
  if [ -n "$PERF_AFTER" ] && [ -z "$perfpid" ] && [ -n "$handled" ] && [ "$handled" -ge "$PERF_AFTER" ]; then
    perf record -F 499 -g -p $P -o $out.perf.data -- sleep 12 > /dev/null 2>&1 &
    perfpid=$!
  fi
done < $fifo
wait $P || true
[ -z "$perfpid" ] || wait $perfpid
rm -f $fifo
echo "load-after $(cut -d' ' -f1-3 /proc/loadavg)" >> $out.progress
cat $out.summary.json
