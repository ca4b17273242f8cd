// bench:http's comparison runs end to end: the service on uWS, the same route on node:http (with
// and without the limiter's leases) and the HTTP layer alone, every request answered 200. A short
// run; the figures themselves belong to `npm run bench:http`.
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

describe('bench:http', () => {
  it('measures the service and its node:http baselines with every request answered', async () => {
    const out = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-bench-http-results-'))
    try {
      await new Promise<void>((resolve, reject) => {
        execFile(
          process.execPath,
          [path.join(ROOT, 'bench/http.mjs')],
          {
            cwd: ROOT,
            env: {
              ...process.env,
              BENCH_RATE: '40',
              BENCH_DURATION: '1',
              BENCH_WARMUP: '0',
              BENCH_CONNECTIONS: '4',
              BENCH_WRK_CONNECTIONS: '4',
              BENCH_RESULTS_DIR: out,
              DATABASE_URL: '',
            },
            timeout: 150_000,
          },
          (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`)) : resolve()),
        )
      })
      const [file] = await fs.readdir(out)
      const report = JSON.parse(await fs.readFile(path.join(out, file), 'utf8'))
      expect(report.results.map((result: { name: string }) => result.name)).toEqual([
        'uWS (service)',
        'node:http (same handler)',
        'node:http, limiter without leases',
      ])
      for (const result of report.results) {
        expect(result.openLoop.statuses, result.name).toEqual({ 200: result.openLoop.sent })
        expect(result.max.errors, result.name).toBe(0)
        expect(result.max.requestsPerSecond, result.name).toBeGreaterThan(0)
      }
      expect(report.httpLayer.uwsRps).toBeGreaterThan(0)
      expect(report.httpLayer.nodeRps).toBeGreaterThan(0)
    } finally {
      await fs.rm(out, { recursive: true, force: true })
    }
  }, 200_000)
})
