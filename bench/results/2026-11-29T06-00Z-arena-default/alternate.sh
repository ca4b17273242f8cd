#!/usr/bin/env bash
# Three rounds of a fresh idle embedded service: serve's own default (arenas capped by mallopt),
# glibc's own (MALLOC_ARENA_MAX=64, above 8 per core), and the environment's cap (MALLOC_ARENA_MAX=2).
here=$(dirname "$0")
for round in 1 2 3; do
  for mode in default uncapped env2; do
    case $mode in default) e=() ;; uncapped) e=(MALLOC_ARENA_MAX=64) ;; env2) e=(MALLOC_ARENA_MAX=2) ;; esac
    out=$(env "${e[@]}" bash "$here/../2026-11-29T03-30Z-idle-memory-3/rss-fresh.sh")
    echo "$mode ${out%%$'\n'*}"
  done
done
