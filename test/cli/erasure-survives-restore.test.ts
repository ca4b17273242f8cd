// Erasure that no backup undoes: a backup taken before a member DELETE (the REST member route, and
// a person's own erasure of their self-enrollment), restored afterwards, serves, identifies and
// exports neither member. The embedded database restores with `palmvein restore`; PostgreSQL with
// pg_dump and pg_restore. Either way the erasure ledger, kept with the master key and never in a
// backup, is applied before anything is served.
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { createClient } from '../../src/store/engine/database.js'
import { insertOrganization } from '../../src/store/organizations.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { runCli } from '../support/process.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal } from '../support/terminals.js'

const run = promisify(execFile)
const palms = population({ seed: 48, identities: 4 })
const PERSON = 'erased@people.example'

describe(`a backup restored after an erasure (${usingPostgres ? 'PostgreSQL, pg_dump and pg_restore' : 'embedded database, palmvein restore'})`, () => {
  let storage: TestStorage
  let svc: TestService
  let scratch: string
  let tenant: PalmTenant
  beforeAll(async () => {
    storage = await createTestStorage()
    svc = await bootService({ storage })
    await waitUntilReady(svc.url)
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-erasure-'))
    tenant = await createPalmTenant(svc, 'erasure@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc.close().catch(() => {})
    await storage.cleanup()
    await fs.rm(scratch, { recursive: true, force: true })
  })

  /**
   * A person enrolls themselves at a kiosk of a global environment, then starts enrolling again (the
   * session the kiosk completes after the erasure). Returns the member id and that completion.
   */
  async function selfEnroll(identity: number): Promise<{ memberId: string; completeAgain: () => ReturnType<TestService['request']> }> {
    const admin = 'operator@platform.example'
    const orgId = (await insertOrganization(svc.service.app.sql, { id: newId(), name: 'National ID', kind: 'platform' }, admin)).id
    const auth = await svc.token(admin)
    const environment = await svc.request('POST', `/v1/organization/${orgId}/environments`, { auth, body: { name: 'Nation' } })
    expectStatus(environment, 201)
    const project = await svc.request('POST', `/v1/organization/${orgId}/projects`, {
      auth,
      body: { name: 'kiosks', environment_id: environment.body.id, plan: 'sandbox' },
    })
    expectStatus(project, 201)
    await liftRateLimits(svc, project.body.id)
    const kiosk = await linkTerminal(svc, auth, project.body.id, { mode: 'enrollment', name: 'Kiosk' })
    const person = await svc.token(PERSON)
    const { member_id: _, ...palmsBody } = enrollBody(palms, identity, 'unused')
    const confirmed = async () => {
      const started = await svc.request('POST', '/v1/self-enrollment/sessions', { auth: person, body: { device_id: kiosk.deviceId, display_name: 'Erin' } })
      expectStatus(started, 201)
      const sessionId = started.body.session.enroll_id
      // The code is the kiosk's to show: only its own Device-Com poll carries it.
      const polled = await svc.request('GET', '/v1/device-com/enrollment?wait=0', { auth: kiosk.deviceToken })
      expectStatus(polled, 200)
      const challenge = polled.body.session.challenge
      expectStatus(await svc.request('POST', `/v1/self-enrollment/sessions/${sessionId}/confirm`, { auth: person, body: { challenge } }), 200)
      return () => svc.request('POST', `/v1/device-com/enrollment/${sessionId}/complete`, { auth: kiosk.deviceToken, body: { ...palmsBody, challenge } })
    }
    const completed = await (await confirmed())()
    expectStatus(completed, 200)
    return { memberId: completed.body.member_id, completeAgain: await confirmed() }
  }

  /** The member ids `palmvein export --include-biometrics` writes for the tenant's project. */
  async function exported(env: Record<string, string>): Promise<string[]> {
    const result = await runCli(['export', '--project', tenant.projectId, '--include-biometrics'], env)
    expect(result.code, result.stderr).toBe(0)
    return result.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { member_id: string }).member_id)
  }

  it('neither serves, identifies nor exports the erased members', { timeout: 240_000 }, async () => {
    const kept = await createMember(svc, tenant, 'Kept')
    const erased = await createMember(svc, tenant, 'Erased')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 0, kept)), 200)
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 1, erased)), 200)
    const { memberId: selfEnrolled, completeAgain } = await selfEnroll(2)

    // The backup: everything above is in it.
    const backup = path.join(scratch, usingPostgres ? 'palmvein.dump' : 'palmvein.backup')
    if (usingPostgres) await run('pg_dump', ['--format=custom', `--file=${backup}`, storage.databaseUrl!])
    else expect((await runCli(['backup', '--out', backup], { PALMVEIN_DATA_DIR: storage.dataDir })).code).toBe(0)

    expectStatus(await svc.request('DELETE', `/v1/projects/${tenant.projectId}/members/${erased}`, { auth: tenant.key }), 204)
    expectStatus(await svc.request('DELETE', `/v1/self-enrollment/me/${selfEnrolled}`, { auth: await svc.token(PERSON) }), 204)
    // The re-enrollment under way was cancelled with the member: its id (in the ledger) is never used again.
    expect((await completeAgain()).status).toBe(409)
    expect(await svc.service.app.sql`SELECT id FROM members WHERE id = ${selfEnrolled}`).toHaveLength(0)
    const ledger = await fs.readFile(path.join(storage.dataDir, 'erasures.log'), 'utf8')
    expect(
      ledger
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).member_id),
    ).toEqual([erased, selfEnrolled])
    expect((await fs.stat(path.join(storage.dataDir, 'erasures.log'))).mode & 0o777).toBe(0o600)
    await svc.stop()

    // Restored: a new data directory holding the master key and the ledger (kept apart from backups).
    const target = path.join(scratch, 'restored')
    await fs.mkdir(target, { recursive: true })
    await fs.copyFile(path.join(storage.dataDir, 'master.key'), path.join(target, 'master.key'))
    let databaseUrl: string | null = null
    let dropRestored = async () => {}
    if (usingPostgres) {
      const admin = createClient({ url: process.env.DATABASE_URL!, max: 1 })
      const name = `palmvein_restored_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
      await admin.unsafe(`CREATE DATABASE ${name}`)
      const url = new URL(process.env.DATABASE_URL!)
      url.pathname = `/${name}`
      databaseUrl = url.toString()
      dropRestored = async () => {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        await admin.end({ timeout: 5 })
      }
      await run('pg_restore', ['--no-owner', `--dbname=${databaseUrl}`, backup])
      await fs.copyFile(path.join(storage.dataDir, 'erasures.log'), path.join(target, 'erasures.log'))
    } else {
      // Without the ledger a restore would bring the erased members back: refused, nothing written.
      const refused = await runCli(['restore', backup], { PALMVEIN_DATA_DIR: target })
      expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('erasure ledger') })
      expect(await fs.readdir(path.join(target, 'pglite')).catch(() => [])).toEqual([])
      await fs.copyFile(path.join(storage.dataDir, 'erasures.log'), path.join(target, 'erasures.log'))
      const restored = await runCli(['restore', backup], { PALMVEIN_DATA_DIR: target })
      expect(restored.code, restored.stderr).toBe(0)
      expect(JSON.parse(restored.stdout)).toMatchObject({ data_dir: target, erased_again: 2 })
    }
    try {
      const env = { PALMVEIN_DATA_DIR: target, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
      expect(await exported(env)).toEqual([kept])

      const copy = await bootService({ storage: { ...storage, databaseUrl, dataDir: target } })
      try {
        await waitUntilReady(copy.url)
        const found = await identify(copy, tenant, identifyBody(palms, 0, 'left'))
        expect(found).toMatchObject({ status: 'Found', member_id: kept })
        const gone = await identify(copy, tenant, identifyBody(palms, 1, 'left'), '?k=3')
        expect(gone).toMatchObject({ status: 'NotFound', member_id: null })
        expect(gone.candidates!.map((candidate) => candidate.member_id)).not.toContain(erased)
        expectStatus(await copy.request('GET', `/v1/projects/${tenant.projectId}/members/${erased}`, { auth: tenant.key }), 404)
        const person = await copy.request('GET', '/v1/self-enrollment/me', { auth: await copy.token(PERSON) })
        expectStatus(person, 200)
        expect(JSON.stringify(person.body)).not.toContain(selfEnrolled)
        const ids = [erased, selfEnrolled]
        const [left] = await copy.service.app.sql<{ members: number; templates: number }[]>`
          SELECT (SELECT count(*)::int FROM members WHERE id = ANY(${ids}::uuid[])) AS members,
                 (SELECT count(*)::int FROM palm_templates WHERE member_id = ANY(${ids}::uuid[])) AS templates`
        expect(left).toEqual({ members: 0, templates: 0 })
      } finally {
        await copy.close()
      }
    } finally {
      await dropRestored()
    }
  })
})
