// wrk for maximum throughput (closed loop, C code, so the generator is not the bottleneck), with a
// Lua `done` hook that prints the percentiles as JSON. Falls back to the undici closed loop.
//
//   import { maxThroughput } from './load/wrk.mjs'
//   const result = await maxThroughput({ url, headers, connections: 32, threads: 1, durationSeconds: 10 })
import { execFile, spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { runClosedLoop } from './closed-loop.mjs'

export const WRK_INSTALL_HINT =
  'wrk is not installed: `apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk` (macOS); using the undici closed loop instead'

export function wrkAvailable() {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' })
  return !probe.error
}

const REPORT = `
done = function(summary, latency, requests)
  local seconds = summary.duration / 1000000
  io.write("WRK_JSON ", string.format('{"requests":%d,"seconds":%.3f,"non2xx":%d,"socket_errors":%d,"p50":%.3f,"p95":%.3f,"p99":%.3f,"max":%.3f,"mean":%.3f}',
    summary.requests, seconds, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000, latency.max / 1000, latency.mean / 1000), "\\n")
end
`

export async function runWrk({ url, headers = {}, connections = 32, threads = 1, durationSeconds = 10 }) {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-wrk-'))
  const script = path.join(directory, 'report.lua')
  await fs.writeFile(script, REPORT)
  const args = ['-t', String(threads), '-c', String(connections), '-d', `${durationSeconds}s`, '-s', script, '--latency']
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`)
  args.push(url)
  try {
    const stdout = await new Promise((resolve, reject) => {
      execFile('wrk', args, { maxBuffer: 1 << 20 }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)))
    })
    const line = stdout.split('\n').find((text) => text.startsWith('WRK_JSON '))
    if (!line) throw new Error(`wrk printed no report:\n${stdout}`)
    const report = JSON.parse(line.slice('WRK_JSON '.length))
    const round = (value) => Math.round(value * 100) / 100
    return {
      tool: 'wrk',
      connections,
      threads,
      durationSeconds,
      ok: report.requests - report.non2xx,
      errors: report.non2xx + report.socket_errors,
      requestsPerSecond: Math.round(report.requests / report.seconds),
      latency: { p50: round(report.p50), p95: round(report.p95), p99: round(report.p99), max: round(report.max), mean: round(report.mean) },
    }
  } finally {
    await fs.rm(directory, { recursive: true, force: true })
  }
}

/** wrk when installed, else the undici closed loop (and say so once). */
export async function maxThroughput(options, log = console.error) {
  if (wrkAvailable()) return runWrk(options)
  log(WRK_INSTALL_HINT)
  return runClosedLoop(options)
}
