#!/bin/bash
# usage: compare.sh RUNS : idle RSS 30 s after /healthz 200, old (3087fb1) and new (HEAD) interleaved
RUNS=${1:-3}
one() { # repo mode
  local repo=$1 mode=$2 port=18610 d db env=()
  case $mode in
    restart) d=/tmp/rss-cmp-$(basename $repo); [ -d $d ] || { mkdir -p $d; }; ;;
    fresh) d=$(mktemp -d /tmp/rss-cmp-fresh.XXXX) ;;
    pg-new|pg-restart) d=$(mktemp -d /tmp/rss-cmp-pg.XXXX); db=palmvein_rss_$(basename $repo | tr -c 'a-z0-9\n' '_');
      [ $mode = pg-new ] && su postgres -c "psql -q -c 'DROP DATABASE IF EXISTS $db' -c 'CREATE DATABASE $db'" 2>/dev/null
      env=(DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/$db) ;;
  esac
  (cd $repo && env "${env[@]}" PORT=$port HOST=127.0.0.1 PALMVEIN_METRICS_PORT=0 PALMVEIN_DATA_DIR=$d PALMVEIN_MASTER_KEY=XokSbEf7NN8X95aqFdizpbQOjkIGp5KsqF2lD9ugq5A= node dist/cli/main.js serve > /tmp/rss-cmp.log 2>&1) &
  local P=$!; sleep 0.5; P=$(pgrep -P $P -n node || echo $P)
  for i in $(seq 1 1200); do curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/healthz 2>/dev/null | grep -q 200 && break; sleep 0.1; done
  sleep 30
  echo "$(basename $repo) $mode $(awk '/VmRSS/{printf "%.0f", $2/1024}' /proc/$P/status) MiB"
  kill -TERM $P; wait 2>/dev/null; sleep 1
  [ $mode = fresh ] && rm -rf $d; [[ $mode == pg-* ]] && rm -rf $d
}
for repo in /work/wt/rss-before /work/main; do one $repo restart >/dev/null; one $repo pg-new > /dev/null; done  # prepare restart data dirs / pg databases
for r in $(seq 1 $RUNS); do for mode in restart fresh pg-new pg-restart; do for repo in /work/wt/rss-before /work/main; do one $repo $mode; done; done; done
