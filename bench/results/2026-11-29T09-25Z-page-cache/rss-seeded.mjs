// RSS of `palmvein serve` (this tree's dist/) on a data directory seed.sh of 2026-11-28-boot made:
// each boot's seconds from process start to /healthz 200, its RSS then, and 15, 30 and 45 s later
// (the idle release runs 10 s after the last request), as one JSON line per boot. Extra settings
// as NAME=value arguments apply to every boot of the run.
//   node rss-seeded.mjs <seeded directory> <boots> [NAME=value ...]
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startService, residentMiB } from '../../service/service-process.mjs'

const [dir, boots = '1', ...settings] = process.argv.slice(2)
const env = Object.fromEntries(
  [...fs.readFileSync(path.join(dir, 'env'), 'utf8').trim().split(/\s+/), ...settings].map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
)
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
for (let boot = 0; boot < Number(boots); boot++) {
  const load = loadavg()
  const service = await startService({ env })
  const rss = { ready: residentMiB(service.pid) }
  for (const after of [15, 30, 45]) {
    await sleep(15_000)
    rss[`after_${after}s`] = residentMiB(service.pid)
  }
  const rows = /(\d+) rows/.exec(service.health)?.[1] ?? null
  console.log(JSON.stringify({ settings, seconds: Number(service.bootSeconds.toFixed(2)), rows, load_before: load, rss_mib: rss }))
  await service.stop()
}
