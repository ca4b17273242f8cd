#!/usr/bin/env bash
cd "${PALMVEIN_TREE:-$(git rev-parse --show-toplevel)}"
work=$(mktemp -d); port=$((20000 + RANDOM % 20000))
PALMVEIN_DATA_DIR=$work/data PORT=$port HOST=127.0.0.1 PALMVEIN_LOG_LEVEL=warn node "$@" dist/cli/main.js serve > $work/log 2>&1 & P=$!
for i in $(seq 1 300); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
sleep 25
echo "RSS $(( $(awk '/VmRSS/{print $2}' /proc/$P/status) / 1024 )) MiB threads: $(cat /proc/$P/task/*/comm | sort | uniq -c | tr '\n' ' ')"
python3 - $P <<'PY'
import sys,re
pid=sys.argv[1]
cur=None; rows=[]
for line in open(f'/proc/{pid}/smaps'):
    if re.match(r'^[0-9a-f]+-[0-9a-f]+ ',line):
        parts=line.split(); cur={'range':parts[0],'perm':parts[1],'name':parts[5] if len(parts)>5 else '[anon]','rss':0}; rows.append(cur)
        a,b=parts[0].split('-'); cur['size']=(int(b,16)-int(a,16))//1024
    elif line.startswith('Rss:'): cur['rss']=int(line.split()[1])
agg={}
for r in rows:
    k=r['name'] if r['name']!='[anon]' else f"[anon] size~{r['size']//1024}MiB"
    agg[k]=agg.get(k,0)+r['rss']
for k,v in sorted(agg.items(),key=lambda x:-x[1])[:25]: print(f"{v/1024:7.1f} MiB  {k}")
PY
kill $P; wait $P 2>/dev/null; rm -rf $work
