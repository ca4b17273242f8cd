// Boot before and after gallery snapshots on one seeded data directory (seed.sh made it):
// twice with snapshots off (the database read), once to write the first snapshot, twice from it.
//   node bench/results/2026-11-28-boot/measure.mjs <directory seed.sh made>
import fs from 'node:fs'
import path from 'node:path'
import { startService, residentMiB } from '../../service/service-process.mjs'
const dir = process.argv[2]
const env = Object.fromEntries(
  fs
    .readFileSync(path.join(dir, 'env'), 'utf8')
    .trim()
    .split(/\s+/)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
)
const snapshots = path.join(env.PALMVEIN_DATA_DIR, 'snapshots')
const rowsOf = (health) => /(\d+) rows/.exec(health)?.[1]
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const results = []
async function boot(label, extra) {
  const load = loadavg()
  const service = await startService({ env: { ...env, ...extra } })
  const result = { label, seconds: Number(service.bootSeconds.toFixed(2)), rows: rowsOf(service.health), load_before: load }
  results.push(result)
  console.log(JSON.stringify(result))
  return service
}
fs.rmSync(snapshots, { recursive: true, force: true })
for (let i = 0; i < 2; i++) await (await boot('database read (snapshots off)', { PALMVEIN_SNAPSHOT_INTERVAL_MS: '0' })).stop()
const first = await boot('database read, then writes the first snapshot', {})
const started = Date.now()
while (!(fs.existsSync(snapshots) && fs.readdirSync(snapshots).some((name) => name.endsWith('.snapshot')))) await new Promise((r) => setTimeout(r, 200))
const file = fs.readdirSync(snapshots).find((name) => name.endsWith('.snapshot'))
console.log(
  JSON.stringify({ snapshot_after_s: (Date.now() - started) / 1000, bytes: fs.statSync(path.join(snapshots, file)).size, rss_mib: residentMiB(first.pid) }),
)
await first.stop()
for (let i = 0; i < 2; i++) await (await boot('from snapshot', {})).stop()
