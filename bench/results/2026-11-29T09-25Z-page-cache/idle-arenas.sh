here=$(dirname "$0")/../2026-11-29T03-30Z-idle-memory-3
out=$(mktemp)
for round in 1 2 3; do
  for mode in default one; do
    if [ $mode = default ]; then e=(); else e=(MALLOC_ARENA_MAX=1); fi
    env "${e[@]}" bash "$here/rss-fresh.sh" > "$out"
    echo "$mode $(sed -n 1p "$out")"
  done
done
rm -f "$out"
