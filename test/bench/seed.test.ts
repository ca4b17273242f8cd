// The benchmark's seeder (bench/service/seed.mjs) loads its members through `palmvein import` and
// hands the load generator probes whose answers it knows: a real service booted on its database
// identifies every mated probe as the member the seeder named. It runs on the built dist/ (as
// `npm run bench` does), on the embedded database.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { startService, type StartedService } from '../../bench/service/service-process.mjs'

const SEED = fileURLToPath(new URL('../../bench/service/seed.mjs', import.meta.url))
const MEMBERS = 120

function runSeed(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; lines: Array<Record<string, unknown>> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SEED, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.once('error', reject)
    child.once('close', (code) =>
      resolve({
        code,
        lines: stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line)),
      }),
    )
  })
}

describe('the benchmark seeder', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-seed-'))
  // The embedded database of a directory of its own, whatever the suite's DATABASE_URL says (an
  // empty DATABASE_URL means none; startService merges this over the test's own environment).
  const env: Record<string, string> = {
    DATABASE_URL: '',
    PALMVEIN_DATA_DIR: path.join(directory, 'data'),
    PALMVEIN_MASTER_KEY: randomBytes(32).toString('base64'),
    PALMVEIN_LOG_LEVEL: 'warn',
    PALMVEIN_WEBHOOK_WORKER: 'false',
  }
  let service: StartedService | null = null
  afterAll(async () => {
    await service?.stop()
    fs.rmSync(directory, { recursive: true, force: true })
  })

  it('imports N members (replacing palms whose captures disagree) and writes probes a booted service answers as it says', async () => {
    const out = path.join(directory, 'seed.json')
    // Three generator threads, so the lines come from several slices joined in order.
    const seeded = await runSeed(['--members', String(MEMBERS), '--probes', '12', '--seed', '7', '--batch', '50', '--threads', '3', '--out', out], {
      ...process.env,
      ...env,
    })
    expect(seeded.code).toBe(0)
    const progress = seeded.lines.filter((line) => line.type === 'progress').map((line) => line.done as number)
    expect(progress.length).toBeGreaterThan(1)
    expect(progress.at(-1)).toBe(MEMBERS)
    const result = JSON.parse(fs.readFileSync(out, 'utf8'))
    expect(fs.statSync(out).mode & 0o777).toBe(0o600)
    // The working files (captures of every member) are gone.
    expect(fs.readdirSync(directory).sort()).toEqual(['data', 'seed.json'])
    expect(result).toMatchObject({ members: MEMBERS, probes: expect.any(Array) })
    expect(result.refused).toBeGreaterThan(0) // the generator's hard identities: some captures disagree
    expect(result.members_per_second).toBeGreaterThan(0)
    const mated = result.probes.filter((probe: { member_id: string | null }) => probe.member_id)
    expect(mated).toHaveLength(6)
    expect(new Set(mated.map((probe: { member_id: string }) => probe.member_id)).size).toBe(6)

    service = await startService({ env })
    expect(service.health).toMatch(/database: ok \(embedded\)/)
    expect(service.health).toMatch(new RegExp(`galleries: ready, 1 environment\\(s\\), ${2 * MEMBERS} rows`))
    for (const probe of mated) {
      const response = await fetch(`${service.url}/v1/projects/${result.project_id}/biometrics/identify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${result.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ palm: { identify_capture: probe.capture } }),
      })
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ status: 'Found', member_id: probe.member_id })
    }
  }, 120_000)
})
