// The TypeScript walkthrough, run as written against a booted service (the twin of
// test/readme-walkthrough.test.ts): the client's docs must not drift from the API.
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { walkthroughBlock } from '../scripts/walkthrough-block.js'
import { bootService, type TestService } from '../../../test/support/service.js'

const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url))
// tsx resolves @palmvein/client (and @palmvein/matcher) with this tsconfig's paths, as an install would.
const TSCONFIG = fileURLToPath(new URL('../tsconfig.json', import.meta.url))

/** Runs a TypeScript file with tsx from the checkout's root, as a user runs it (the CLI steps open its ./data). */
async function runTypeScript(file: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = path.join(REPOSITORY, 'node_modules', '.bin', 'tsx')
  try {
    const { stdout, stderr } = await promisify(execFile)(tsx, ['--tsconfig', TSCONFIG, file], { cwd: REPOSITORY, env })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) }
  }
}

describe('@palmvein/client walkthrough', () => {
  let svc: TestService
  let scratch: string
  beforeAll(async () => {
    svc = await bootService({ config: { webhookAllowLocalhost: true } })
    // Inside the repository, so that the script resolves @palmvein/client as a user's project would.
    await fs.mkdir(path.join(REPOSITORY, 'scratch'), { recursive: true })
    scratch = await fs.mkdtemp(path.join(REPOSITORY, 'scratch', 'client-walkthrough-'))
  }, 120_000)
  afterAll(async () => {
    await svc?.close()
    if (scratch) await fs.rm(scratch, { recursive: true, force: true })
  })

  it('runs top to bottom with the answers it shows: enrolls a synthetic palm, finds it, not a stranger, subscribes a webhook, a typed refusal', async () => {
    const { markdown, code } = await walkthroughBlock()
    const file = path.join(scratch, 'walkthrough.ts')
    await fs.writeFile(file, `${code}\nconsole.log('MEMBER=' + member_id)\n`)
    const {
      code: exit,
      stdout,
      stderr,
    } = await runTypeScript(file, {
      // The operator's CLI steps open the service's own database.
      ...process.env,
      PV: svc.url,
      PALMVEIN_DATA_DIR: svc.storage.dataDir,
      DATABASE_URL: svc.storage.databaseUrl ?? '',
      PALMVEIN_LOG_LEVEL: 'warn',
    })
    expect(exit, stderr).toBe(0)
    const member = /^MEMBER=(.+)$/m.exec(stdout)![1]
    const answers = stdout
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
    expect(answers).toHaveLength(5)
    const [enrolled, found, stranger, webhook, refusal] = answers
    expect(enrolled).toEqual({ member_id: member })
    expect(found).toMatchObject({ status: 'Found', member_id: member, hand: 'left' })
    expect(stranger).toMatchObject({ status: 'NotFound', member_id: null, hand: null })
    // The answers the block shows, to the last digits an ISA may round differently.
    const shown = [...markdown.matchAll(/\/\/ → \{"status":"\w+",.*"match_score":([\d.]+)/g)].map((match) => Number(match[1]))
    expect(shown).toHaveLength(2)
    expect(found.match_score).toBeCloseTo(shown[0], 6)
    expect(stranger.match_score).toBeCloseTo(shown[1], 6)
    expect(webhook).toMatchObject({
      url: 'http://localhost:9000/palmvein',
      event_types: ['enrollment.completed'],
      enabled: true,
      secret: expect.stringMatching(/^whsec_/),
    })
    const shownRefusal = /\/\/ → (\{"status":4\d\d,.*\})/.exec(markdown)![1]
    expect(refusal).toEqual(JSON.parse(shownRefusal))
  }, 180_000)
})
