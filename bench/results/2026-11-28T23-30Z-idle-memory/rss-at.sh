#!/bin/bash
# usage: rss-at.sh LABEL [node args] ; env passes through. prints label, healthz s, rss at 30 s
D=/tmp/rss-a; PORT=18601; L=$1; shift
PORT=$PORT HOST=127.0.0.1 PALMVEIN_METRICS_PORT=0 PALMVEIN_DATA_DIR=$D node "$@" dist/cli/main.js serve > $D.log 2>&1 &
P=$!; S=$(date +%s.%N)
for i in $(seq 1 600); do curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/healthz 2>/dev/null | grep -q 200 && break; sleep 0.1; done
T=$(echo "$(date +%s.%N) - $S" | bc)
sleep ${WAIT:-30}
echo "$L healthz=${T:0:5}s $(grep -E 'VmRSS' /proc/$P/status | tr -s ' \t' ' ') $(grep -E 'VmHWM' /proc/$P/status | tr -s ' \t' ' ')"
kill -TERM $P; wait $P
