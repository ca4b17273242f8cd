# usage: python3 smaps-sample.py <out> <the dedup CLI's stderr file>: every 5 s, the running `palmvein dedup`
# process's resident memory by mapping (V8's 256 KiB pages, anonymous mappings by size, brk heap,
# files) and the phase it is in (run beside cli-1m.sh).
import sys, time, os, re, subprocess
out = open(sys.argv[1], 'a')
def find():
    for p in os.listdir('/proc'):
        if p.isdigit():
            try:
                if open(f'/proc/{p}/comm').read().strip() == 'node' and 'dedup' in open(f'/proc/{p}/cmdline').read(): return p
            except Exception: pass
pid = None
while not pid: pid = find(); time.sleep(0.5)
while os.path.exists(f'/proc/{pid}'):
    try:
        sums = {}; size = 0; name = ''
        for line in open(f'/proc/{pid}/smaps'):
            m = re.match(r'^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$', line)
            if m:
                size = (int(m.group(2), 16) - int(m.group(1), 16)) // 1024; name = m.group(3).strip(); continue
            if line.startswith('Rss:'):
                rss = int(line.split()[1])
                if name and not name.startswith('['): c = 'file'
                elif name: c = name
                elif size == 256: c = 'v8-256k'
                elif size <= 2048: c = 'anon<=2M'
                elif size <= 65536: c = 'anon<=64M'
                else: c = 'anon>64M'
                sums[c] = sums.get(c, 0) + rss
        phase = ''
        try:
            ph = [l for l in open('sys.argv[2]') if 'phase' in l]
            phase = ph[-1].strip() if ph else ''
        except Exception: pass
        out.write(time.strftime('%T') + ' total=%d ' % sum(sums.values()) + ' '.join('%s=%d' % kv for kv in sorted(sums.items())) + ' ' + phase[:40] + '\n'); out.flush()
    except Exception: pass
    time.sleep(5)
