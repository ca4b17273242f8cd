#!/bin/bash
# usage: seed.sh <members>   (PostgreSQL, db importsearch_<n>)
set -e
cd "$(dirname "$0")/../../.."
n=$1
dir=scratch/pg-$n
mkdir -p $dir/data
key=$(head -c32 /dev/urandom | base64)
echo "$key" > $dir/master.key
db=importsearch_$n
PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
env="PALMVEIN_DATA_DIR=$dir/data PALMVEIN_MASTER_KEY=$key PALMVEIN_WEBHOOK_WORKER=false DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/$db"
echo "$env" > $dir/env
start=$(date +%s)
env $env nice -n 10 node bench/service/seed.mjs --members $n --probes 2 --out $dir/seed.json > $dir/seed.log 2>&1
echo "seeded $n in $(( $(date +%s) - start )) s" | tee -a $dir/seed.log
