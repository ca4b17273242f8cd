#!/bin/bash
# Seeds N members (bench/service/seed.mjs) into a data directory kept for measure.mjs.
# usage: seed.sh <members> <embedded|postgres>
set -e
cd "$(dirname "$0")/../../.."
n=$1; kind=$2
dir=${BOOT_DIR:-scratch/boot}/$kind-$n
mkdir -p $dir/data
key=$(head -c32 /dev/urandom | base64)
echo "$key" > $dir/master.key
env="PALMVEIN_DATA_DIR=$dir/data PALMVEIN_MASTER_KEY=$key PALMVEIN_WEBHOOK_WORKER=false"
if [ $kind = postgres ]; then
  db=palmvein_boot_$n
  PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  env="$env DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/$db"
fi
echo "$env" > $dir/env
start=$(date +%s)
env $env nice -n 10 node bench/service/seed.mjs --members $n --probes 200 --out $dir/seed.json > $dir/seed.log 2>&1
echo "seeded $n $kind in $(( $(date +%s) - start )) s" | tee -a $dir/seed.log
