#!/bin/bash
# The 100k pair: old page cache (16MB) and new (8MB), alternately; reports in /tmp/sbpair-<size>-<round>.
cd "$(git rev-parse --show-toplevel)"
for r in 1 2; do for sb in 16MB 8MB; do
  s=$(date +%s)
  PALMVEIN_EMBEDDED_SHARED_BUFFERS=$sb node bench/run.mjs --sizes 100000 --skip-matcher --skip-console --skip-pgvector --embedded --no-build --out /tmp/sbpair-$sb-$r > /tmp/sbpair-$sb-$r.log 2>&1
  echo "$sb round $r: $(( $(date +%s) - s )) s" >> /tmp/sbpair.done
done; done
