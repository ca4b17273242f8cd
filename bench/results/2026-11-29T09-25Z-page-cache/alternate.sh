#!/usr/bin/env bash
# Three rounds of a fresh idle embedded service: the new default page cache (8MB) against the
# old one (PALMVEIN_EMBEDDED_SHARED_BUFFERS=16MB), RSS at ready, +15 s and +30 s (the idle release
# runs 10 s after ready). Each run's output goes to a file first: a pipe into `head` would end
# rss-fresh.sh before it stops its service.
here=$(dirname "$0")
out=$(mktemp)
for round in 1 2 3; do
  for size in default 16MB; do
    if [ $size = default ]; then e=(); else e=(PALMVEIN_EMBEDDED_SHARED_BUFFERS=$size); fi
    env "${e[@]}" bash "$here/../2026-11-29T03-30Z-idle-memory-3/rss-fresh.sh" > "$out"
    echo "$size $(sed -n 1p "$out")"
  done
done
rm -f "$out"
