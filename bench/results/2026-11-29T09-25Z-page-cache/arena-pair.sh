#!/bin/bash
# The 100k pair: two malloc arenas (the cap before) and one, alternately, both with the 8MB page cache.
cd "$(git rev-parse --show-toplevel)"
for r in 1 2; do for a in 2 1; do
  s=$(date +%s)
  MALLOC_ARENA_MAX=$a node bench/run.mjs --sizes 100000 --skip-matcher --skip-console --skip-pgvector --embedded --no-build --out /tmp/arenapair-$a-$r > /tmp/arenapair-$a-$r.log 2>&1
  echo "arenas $a round $r: $(( $(date +%s) - s )) s" >> /tmp/arenapair.done
done; done
