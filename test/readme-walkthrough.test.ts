// The README's curl walkthrough, run as written against a booted service: a new user's first hour
// must not break silently when the API or the CLI changes.
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootService, type TestService } from './support/service.js'

const REPOSITORY = fileURLToPath(new URL('..', import.meta.url))

async function walkthroughBlock(): Promise<string> {
  const readme = await fs.readFile(path.join(REPOSITORY, 'README.md'), 'utf8')
  const match = /<!-- walkthrough -->\n```sh\n([\s\S]*?)\n```/.exec(readme)
  if (!match) throw new Error('README.md has no <!-- walkthrough --> sh block')
  return match[1]
}

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: REPOSITORY, env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe('README walkthrough', () => {
  let svc: TestService
  beforeAll(async () => {
    svc = await bootService({ config: { webhookAllowLocalhost: true } })
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('runs top to bottom: enrolls a synthetic palm, finds it, does not find a stranger, subscribes a webhook', async () => {
    const script = await walkthroughBlock()
    // Print the variables the block set, so the answers can be checked against them.
    const { code, stdout, stderr } = await runBash(`${script}\necho "MEMBER=$MEMBER"\necho "PROJECT=$PROJECT"`, {
      // The operator's CLI step opens the service's own database.
      ...process.env,
      PV: svc.url,
      PALMVEIN_DATA_DIR: svc.storage.dataDir,
      DATABASE_URL: svc.storage.databaseUrl ?? '',
      PALMVEIN_LOG_LEVEL: 'warn',
    })
    expect(code, stderr).toBe(0)
    const lines = stdout.trim().split('\n')
    const member = /^MEMBER=(.+)$/m.exec(stdout)![1]
    const answers = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line))
    expect(answers).toHaveLength(4)
    const [enrolled, found, stranger, webhook] = answers
    expect(enrolled).toEqual({ member_id: member })
    expect(found).toMatchObject({ status: 'Found', member_id: member, hand: 'left' })
    // The seeded generator is deterministic: the README shows these scores (to the last digits an ISA may round differently).
    const readme = await fs.readFile(path.join(REPOSITORY, 'README.md'), 'utf8')
    const shown = [...readme.matchAll(/# → \{"status":"\w+",.*"match_score":([\d.]+)/g)].map((match) => Number(match[1]))
    expect(shown).toHaveLength(2)
    expect(found.match_score).toBeCloseTo(shown[0], 6)
    expect(stranger.match_score).toBeCloseTo(shown[1], 6)
    expect(stranger).toMatchObject({ status: 'NotFound', member_id: null })
    expect(webhook).toMatchObject({ url: 'http://localhost:9000/palmvein', event_types: ['enrollment.completed'], enabled: true })
  }, 120_000)
})
