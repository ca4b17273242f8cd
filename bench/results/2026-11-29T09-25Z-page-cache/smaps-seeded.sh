#!/usr/bin/env bash
# usage: maps-seeded.sh <seeded dir> [NAME=value ...]
cd "$(git rev-parse --show-toplevel)"
dir=$1; shift
port=$((20000 + RANDOM % 20000))
env $(cat $dir/env) "$@" PORT=$port HOST=127.0.0.1 PALMVEIN_LOG_LEVEL=warn node dist/cli/main.js serve > /tmp/maps-seeded.log 2>&1 & P=$!
for i in $(seq 1 600); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
sleep 40
echo "RSS $(( $(awk '/VmRSS/{print $2}' /proc/$P/status) / 1024 )) MiB"
python3 - $P <<'PY'
import sys,re
pid=sys.argv[1]; rows=[];cur=None
for line in open(f'/proc/{pid}/smaps'):
    if re.match(r'^[0-9a-f]+-[0-9a-f]+ ',line):
        p=line.split(); a,b=[int(x,16) for x in p[0].split('-')]
        cur={'a':a,'b':b,'name':p[5] if len(p)>5 else '[anon]','perm':p[1],'rss':0}; rows.append(cur)
    elif line.startswith('Rss:'): cur['rss']=int(line.split()[1])
small=sum(r['rss'] for r in rows if r['rss']<1024)
for r in sorted(rows,key=lambda r:-r['rss']):
    if r['rss']<1024: continue
    print(f"{r['rss']/1024:7.1f} MiB of {(r['b']-r['a'])/2**20:8.1f} MiB {r['perm']} {r['name']}")
print(f"{small/1024:7.1f} MiB in mappings under 1 MiB each")
PY
kill $P; wait $P 2>/dev/null
