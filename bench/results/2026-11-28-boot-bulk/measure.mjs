// Boots `palmvein serve` (this tree's dist/, through bench/service/service-process.mjs) on a data
// directory seed.sh of 2026-11-28-boot made, and prints each boot's seconds from process start to
// /healthz 200 as a JSON line: first one boot that reads the database (snapshots on, none on disk:
// it then writes the first one, timed), then `--from-snapshot` boots from that snapshot. Run the
// same script from a copy of the earlier tree to time the code before (see report.md).
// `--database-only N`: N boots with snapshots off (each reads the database), nothing else.
// (A CPU profile is taken by hand: `node --cpu-prof dist/cli/main.js serve` with the directory's
// env; Node refuses --cpu-prof in NODE_OPTIONS.)
//   node measure.mjs <seeded directory> [--from-snapshot 2] [--keep-snapshot] [--database-only N]
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { startService, residentMiB } from '../../service/service-process.mjs'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'from-snapshot': { type: 'string', default: '2' }, 'keep-snapshot': { type: 'boolean', default: false }, 'database-only': { type: 'string' } },
})
const dir = positionals[0]
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
const snapshotFileOf = () => fs.existsSync(snapshots) && fs.readdirSync(snapshots).find((name) => name.endsWith('.snapshot'))

async function boot(label, extra = {}) {
  const load = loadavg()
  const service = await startService({ env: { ...env, ...extra } })
  console.log(JSON.stringify({ label, seconds: Number(service.bootSeconds.toFixed(2)), rows: rowsOf(service.health), load_before: load, rss_mib: residentMiB(service.pid) }))
  return service
}

if (values['database-only']) {
  for (let run = 0; run < Number(values['database-only']); run++) await (await boot('database read (snapshots off)', { PALMVEIN_SNAPSHOT_INTERVAL_MS: '0' })).stop()
  process.exit(0)
}
if (!values['keep-snapshot']) {
  fs.rmSync(snapshots, { recursive: true, force: true })
  const first = await boot('database read (then writes the first snapshot)')
  const started = Date.now()
  while (!snapshotFileOf()) await new Promise((resolve) => setTimeout(resolve, 200))
  const file = snapshotFileOf()
  console.log(JSON.stringify({ snapshot_after_s: (Date.now() - started) / 1000, bytes: fs.statSync(path.join(snapshots, file)).size }))
  await first.stop()
}
for (let run = 0; run < Number(values['from-snapshot']); run++) await (await boot('from snapshot')).stop()
