// bench:http talks to an HTTPS service: with BENCH_TLS=1 it serves the built service with a
// certificate and its load generators (this process's fetch, the forked open loop, the closed loop)
// trust it through the CA file. A short run; the figures themselves belong to `npm run bench`.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

describe('bench:http over HTTPS', () => {
  it('measures the service over TLS 1.3 with every request answered', async () => {
    const { stdout } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        process.execPath,
        [path.join(ROOT, 'bench/http.mjs')],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            BENCH_TLS: '1',
            BENCH_RATE: '40',
            BENCH_DURATION: '1',
            BENCH_WARMUP: '0',
            BENCH_CONNECTIONS: '4',
            BENCH_WRK_CONNECTIONS: '4',
            DATABASE_URL: '',
          },
          timeout: 120_000,
        },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve({ stdout: out, stderr: err })),
      )
    })
    expect(stdout).toMatch(/over HTTPS \(clients trust .*bench-cert\.pem\)/)
    const row = stdout.split('\n').find((line) => line.startsWith('node:https (service, TLS 1.3)'))
    expect(row, stdout).toBeDefined()
    // p50, p95, p99, sent late p95, achieved req/s, errors, max req/s, max-load p99 (after the target's name)
    const [, , , sentLate, achieved, errors, max] = row!.replace('node:https (service, TLS 1.3)', '').trim().split(/\s+/).map(Number)
    expect(sentLate).toBeGreaterThanOrEqual(0)
    expect(achieved).toBeGreaterThan(0)
    expect(errors).toBe(0)
    expect(max).toBeGreaterThan(0)
  }, 180_000)
})
