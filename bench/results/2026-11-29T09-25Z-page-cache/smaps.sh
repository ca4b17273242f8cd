#!/usr/bin/env bash
# A service's mappings of over 1 MiB, 30 s (idle) or 40 s (seeded) after /healthz 200, and the sum of
# the smaller ones. Without a directory: a fresh idle embedded service on a new data directory;
# with one made by seed.sh of 2026-11-28-boot: the service on it (its env file). Extra settings as
# NAME=value. Writes the service's log to a temporary directory, removed afterwards.
#   smaps.sh [<seeded directory>] [NAME=value ...]
cd "$(git rev-parse --show-toplevel)"
work=$(mktemp -d); port=$((20000 + RANDOM % 20000)); settle=30
if [ -d "${1:-}" ]; then settings=$(cat "$1/env"); settle=40; shift; else settings="PALMVEIN_DATA_DIR=$work/data"; fi
env $settings "$@" PORT=$port HOST=127.0.0.1 PALMVEIN_LOG_LEVEL=warn node dist/cli/main.js serve > $work/log 2>&1 & P=$!
for i in $(seq 1 600); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
sleep $settle
echo "RSS $(( $(awk '/VmRSS/{print $2}' /proc/$P/status) / 1024 )) MiB"
python3 - $P <<'PY'
import sys, re
rows, current = [], None
for line in open(f'/proc/{sys.argv[1]}/smaps'):
    if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line):
        fields = line.split(); start, end = [int(x, 16) for x in fields[0].split('-')]
        current = {'size': end - start, 'name': fields[5] if len(fields) > 5 else '[anon]', 'perm': fields[1], 'rss': 0}; rows.append(current)
    elif line.startswith('Rss:'):
        current['rss'] = int(line.split()[1])
for row in sorted(rows, key=lambda row: -row['rss']):
    if row['rss'] >= 1024: print(f"{row['rss']/1024:7.1f} MiB of {row['size']/2**20:8.1f} MiB {row['perm']} {row['name']}")
print(f"{sum(row['rss'] for row in rows if row['rss'] < 1024)/1024:7.1f} MiB in mappings under 1 MiB each")
PY
kill $P; wait $P 2>/dev/null; rm -rf $work
