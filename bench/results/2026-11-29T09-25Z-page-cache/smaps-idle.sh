#!/usr/bin/env bash
cd "$(git rev-parse --show-toplevel)"
work=$(mktemp -d); port=$((20000 + RANDOM % 20000))
PALMVEIN_DATA_DIR=$work/data PORT=$port HOST=127.0.0.1 PALMVEIN_LOG_LEVEL=warn node "$@" dist/cli/main.js serve > $work/log 2>&1 & P=$!
for i in $(seq 1 300); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
sleep 30
echo "RSS $(( $(awk '/VmRSS/{print $2}' /proc/$P/status) / 1024 )) MiB"
for t in /proc/$P/task/*; do echo "thread $(cat $t/comm) sp=$(awk '{print $(NF-1)}' $t/syscall 2>/dev/null)"; done > $work/threads
python3 - $P $work/threads <<'PY'
import sys,re
pid=sys.argv[1]
threads=[l.split() for l in open(sys.argv[2])]
sps=[(t[1], int(t[2][3:],16)) for t in threads if t[2].startswith('sp=0x')]
rows=[];cur=None
for line in open(f'/proc/{pid}/smaps'):
    if re.match(r'^[0-9a-f]+-[0-9a-f]+ ',line):
        p=line.split(); a,b=[int(x,16) for x in p[0].split('-')]
        cur={'a':a,'b':b,'name':p[5] if len(p)>5 else '[anon]','perm':p[1],'rss':0}; rows.append(cur)
    elif line.startswith('Rss:'): cur['rss']=int(line.split()[1])
for r in sorted(rows,key=lambda r:-r['rss']):
    if r['rss']<1024: continue
    who=[n for n,sp in sps if r['a']<=sp<r['b']]
    print(f"{r['rss']/1024:6.1f} MiB of {(r['b']-r['a'])/2**20:8.1f} MiB {r['perm']} {r['name']} {'stack of '+','.join(who) if who else ''}")
PY
kill $P; wait $P 2>/dev/null; rm -rf $work
