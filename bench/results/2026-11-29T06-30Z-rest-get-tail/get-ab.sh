#!/usr/bin/env bash
# A/B of the REST GET phase at 10k members: NODE_OPTIONS extra flags per run; gcwatch in the service.
cd /work/main
for spec in "semi32:--max-semi-space-size=32" "base:" "semi32b:--max-semi-space-size=32" "baseb:"; do
  name=${spec%%:*}; flags=${spec#*:}
  rm -f /tmp/gcwatch-*.ndjson
  NODE_OPTIONS="$flags --require /tmp/gcwatch.cjs" node bench/run.mjs --sizes 10000 --skip-matcher --skip-console --skip-pgvector --embedded --no-build --out /tmp/ab-$name > /tmp/ab-$name.log 2>&1
  cp /tmp/gcwatch-*.ndjson /tmp/ab-$name/ 2>/dev/null
  echo "== $name"; grep -A5 "| members | route" /tmp/ab-$name/report.md | tail -3
done
