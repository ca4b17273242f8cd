#!/usr/bin/env bash
# `palmvein dedup` (the cell search) on a seeded embedded directory of 2026-11-28-boot's seed.sh,
# its process's RSS sampled every 2 s with the 1-minute load; /usr/bin/time -v's figures in <out>.err.
#   cli-1m.sh <seeded directory> <environment id> <out prefix>
cd "$(git rev-parse --show-toplevel)"
dir=$1; environment=$2; out=$3
env $(cat $dir/env) PALMVEIN_LOG_LEVEL=warn /usr/bin/time -v node dist/cli/main.js dedup --environment $environment --progress-lines --summary $out-summary.json > $out-pairs.ndjson 2> $out.err & P=$!
sleep 0.5; C=$(pgrep -P $P | head -1)
while kill -0 $P 2>/dev/null; do echo "$(date -u +%H:%M:%S) $(awk '/VmRSS/{print $2}' /proc/$C/status 2>/dev/null) $(cut -d' ' -f1 /proc/loadavg)"; sleep 2; done > $out-rss.txt
wait $P
