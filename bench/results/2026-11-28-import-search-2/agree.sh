#!/bin/bash
# usage: agree.sh <members> <lines> [cell-probes]  -- two environments seeded alike, candidates imported exact vs cells
set -e
cd "$(dirname "$0")/../../.."
n=$1; lines=$2; probes=${3:-32}
dir=scratch/agree-$n
mkdir -p $dir/data
db=importsearch_agree_$n
if [ ! -f $dir/a.json ]; then
  key=$(head -c32 /dev/urandom | base64); echo "$key" > $dir/master.key
  PGPASSWORD=postgres psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  echo "PALMVEIN_DATA_DIR=$dir/data PALMVEIN_MASTER_KEY=$key PALMVEIN_WEBHOOK_WORKER=false DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/$db" > $dir/env
  for side in a b; do env $(cat $dir/env) nice -n 10 node bench/service/seed.mjs --members $n --probes 2 --out $dir/$side.json > $dir/seed-$side.log; done
fi
for side in a b; do node bench/service/import-candidates.mjs --members $n --lines $lines --tag $side --out $dir/candidates-$side.ndjson; done
for side in a b; do
  mode=$([ $side = a ] && echo exact || echo cells)
  project=$(node -e "console.log(JSON.parse(require('fs').readFileSync('$dir/$side.json')).project_id)")
  PGPASSWORD=postgres psql -q -h 127.0.0.1 -U postgres -d $db -c "DELETE FROM members WHERE display_name LIKE 'candidate %'" >/dev/null
  echo "$side $mode load $(cut -d' ' -f1-3 /proc/loadavg)"
  env $(cat $dir/env) nice -n 10 node dist/cli/main.js import --project $project --duplicate-search $mode --cell-probes $probes --rejects $dir/rejects-$mode.ndjson $dir/candidates-$side.ndjson > $dir/summary-$mode.json || true
  cat $dir/summary-$mode.json
done
node -e "
const fs=require('fs'); const read=(f)=>fs.readFileSync(f,'utf8').trim().split('\n').filter(Boolean).map(JSON.parse)
const a=read('$dir/rejects-exact.ndjson'), b=read('$dir/rejects-cells.ndjson')
const key=(r)=>r.line+' '+r.code+' '+r.detail
const sa=new Set(a.map(key)), sb=new Set(b.map(key))
const onlyA=a.filter(r=>!sb.has(key(r))), onlyB=b.filter(r=>!sa.has(key(r)))
console.log(JSON.stringify({lines:$lines, exact_refused:a.length, cells_refused:b.length, identical_refusals:a.length-onlyA.length, only_exact:onlyA.slice(0,5), only_exact_count:onlyA.length, only_cells:onlyB.slice(0,5), only_cells_count:onlyB.length}))
"
