#!/usr/bin/env bash
cd "${PALMVEIN_TREE:-$(git rev-parse --show-toplevel)}"
work=$(mktemp -d); port=$((20000 + RANDOM % 20000))
PALMVEIN_DATA_DIR=$work/data PORT=$port HOST=127.0.0.1 PALMVEIN_LOG_LEVEL=warn node "$@" dist/cli/main.js serve > $work/log 2>&1 & P=$!
for i in $(seq 1 300); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
sleep 25
python3 - $P <<'PY'
import sys,re
pid=sys.argv[1]
cur=None; rows=[]
for line in open(f'/proc/{pid}/smaps'):
    if re.match(r'^[0-9a-f]+-[0-9a-f]+ ',line):
        parts=line.split(); a,b=parts[0].split('-'); cur={'a':int(a,16),'size':(int(b,16)-int(a,16))//1024,'perm':parts[1],'name':parts[5] if len(parts)>5 else ''}; rows.append(cur)
    elif line.startswith('Rss:'): cur['rss']=int(line.split()[1])
for i,r in enumerate(rows):
    if r['rss']>2048 and not r['name']:
        ctx=[rows[j] for j in (i-1,i+1) if 0<=j<len(rows)]
        print(f"{r['rss']/1024:6.1f}/{r['size']/1024:8.1f} MiB {r['perm']} {hex(r['a'])}  neighbours: " + "; ".join(f"{c['size']/1024:.0f}MiB {c['perm']} {c['name']}" for c in ctx))
PY
kill $P; wait $P 2>/dev/null; rm -rf $work
