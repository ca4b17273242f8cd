#!/bin/bash
# usage: import-cpu.sh <repo> <mode> <file> [extra args]  -> per progress line: wall, process CPU s (all threads), line
repo=$1; mode=$2; file=$3; shift 3
cd $repo
d=/work/main/scratch/pg-1000000
export PGPASSWORD=postgres
psql -q -h 127.0.0.1 -U postgres -d importsearch_1000000 -c "DELETE FROM members WHERE display_name LIKE 'candidate %'" >/dev/null
project=$(node -e "console.log(JSON.parse(require('fs').readFileSync('$d/seed.json')).project_id)")
fifo=$(mktemp -u); mkfifo $fifo
tck=$(getconf CLK_TCK)
start=$(date +%s.%N)
echo "load-before $(cut -d' ' -f1-3 /proc/loadavg)"
env $(cat $d/env) nice -n 10 node dist/cli/main.js import --project $project --duplicate-search $mode --progress-lines --rejects /tmp/rejects-$mode-$(basename $file) "$@" $file > /tmp/summary-$mode.json 2> $fifo &
P=$!
while IFS= read -r l; do
  cpu=$(awk -v t=$tck '{printf "%.1f", ($14+$15)/t}' /proc/$P/stat 2>/dev/null)
  echo "$(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') cpu=$cpu $l"
done < $fifo
wait $P
rm -f $fifo
echo "load-after $(cut -d' ' -f1-3 /proc/loadavg)"
cat /tmp/summary-$mode.json
