#!/bin/bash
# usage: million.sh <mode> <lines> <tag> [cell-probes]  -- import candidates into the 1M environment
set -e
cd "$(dirname "$0")/../../.."
mode=$1; lines=$2; tag=$3; probes=${4:-32}
dir=scratch/pg-1000000
file=$dir/candidates-$tag-$lines.ndjson
[ -f $file ] || node bench/service/import-candidates.mjs --members 1000000 --lines $lines --tag $tag --out $file
project=$(node -e "console.log(JSON.parse(require('fs').readFileSync('$dir/seed.json')).project_id)")
db=importsearch_1000000
PGPASSWORD=postgres psql -q -h 127.0.0.1 -U postgres -d $db -c "DELETE FROM members WHERE display_name LIKE 'candidate %'" >/dev/null
echo "$mode $lines $tag probes=$probes load-before $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)"
start=$(date +%s.%N)
env $(cat $dir/env) nice -n 10 node dist/cli/main.js import --project $project --duplicate-search $mode --cell-probes $probes --progress-lines --rejects $dir/rejects-$mode-$tag-$lines.ndjson $file > $dir/summary-$mode-$tag-$lines.json 2> >(while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > $dir/stderr-$mode-$tag-$lines.log) || true
end=$(date +%s.%N)
echo "wall $(echo "$end - $start" | bc) s load-after $(cut -d' ' -f1-3 /proc/loadavg)"
cat $dir/summary-$mode-$tag-$lines.json
