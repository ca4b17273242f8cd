// Two service processes on one database stay in sync through LISTEN/NOTIFY. On PostgreSQL the
// second one is a real `palmvein serve` process; on PGlite (one process serves it) it is a second
// service in this process sharing the embedded database, which still goes through notify/listen.
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createMember, createPalmTenant, enrollBody, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { spawnCli } from '../support/process.js'
import { bootService, expectStatus, request, type TestService } from '../support/service.js'

const palms = population({ identities: 20 })
const racePalms = population({ seed: 2024, identities: 64 })
// Twenty ordinary people (no hard captures, no look-alikes), so each pair races over one palm only.
const raceIdentities = Array.from({ length: 64 }, (_, identity) => racePalms.profile(identity))
  .filter((profile) => !profile.hard && profile.relatedTo === null)
  .slice(0, 20)
  .map((profile) => profile.identity)

describe(`two service processes on one ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  let a: TestService
  let bUrl: string
  let bInProcess: TestService | null = null
  let bChild: { child: ChildProcess; exited: Promise<number | null> } | null = null
  let tenant: PalmTenant

  beforeAll(async () => {
    a = await bootService()
    if (usingPostgres) {
      // Spawned here (not through startServeProcess) so afterAll can stop it even if it never starts.
      const child = spawnCli(['serve'], {
        DATABASE_URL: a.storage.databaseUrl!,
        PALMVEIN_DATA_DIR: a.storage.dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        PALMVEIN_MATCHER_THREADS: '1',
        PALMVEIN_WEBHOOK_WORKER: 'false',
        PALMVEIN_LOG_LEVEL: 'info',
      })
      bChild = { child, exited: new Promise((resolve) => child.on('exit', resolve)) }
      bUrl = await new Promise<string>((resolve, reject) => {
        let output = ''
        const onData = (chunk: Buffer) => {
          output += chunk
          const match = /HTTP: listening on (http:\/\/[^\s"]+)/.exec(output)
          if (match) resolve(match[1])
        }
        child.stdout!.on('data', onData)
        child.stderr!.on('data', onData)
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)))
      })
    } else {
      bInProcess = await bootService({ storage: a.storage })
      bUrl = bInProcess.url
    }
    await waitUntilReady(a.url)
    await waitUntilReady(bUrl)
    tenant = await createPalmTenant(a, 'two@example.com')
  }, 150_000)
  afterAll(async () => {
    if (bChild && bChild.child.exitCode === null) {
      bChild.child.kill('SIGTERM')
      await bChild.exited
    }
    await bInProcess?.close()
    await a.close()
  })

  const call = (url: string, method: string, path: string, body?: unknown) => request(url, method, path, { auth: tenant.key, body })
  const identifyAt = async (url: string, identity: number, hand: 'left' | 'right') => {
    const response = await call(url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, identifyBody(palms, identity, hand))
    expectStatus(response, 200)
    return response.body as { status: string; member_id: string | null }
  }
  /** Polls `url` until identify gives `expected`; returns the milliseconds it took. */
  const untilIdentify = async (url: string, identity: number, hand: 'left' | 'right', expected: { status: string; member_id: string | null }) => {
    const started = Date.now()
    let last: unknown
    while (Date.now() - started < 5_000) {
      last = await identifyAt(url, identity, hand)
      if (
        JSON.stringify(last) !== undefined &&
        (last as { status: string }).status === expected.status &&
        (last as { member_id: string | null }).member_id === expected.member_id
      ) {
        return Date.now() - started
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`identify at ${url} still answers ${JSON.stringify(last)} after 5 s`)
  }

  it('an enrollment through A is identifiable through B within one second, and the other way round', async () => {
    const x = await createMember(a, tenant, 'x')
    expectStatus(await call(a.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, enrollBody(palms, 0, x)), 200)
    expect(await untilIdentify(bUrl, 0, 'left', { status: 'Found', member_id: x })).toBeLessThan(1000)

    const y = (await call(bUrl, 'POST', `/v1/projects/${tenant.projectId}/members`, { display_name: 'y' })).body.member_id
    expectStatus(await call(bUrl, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, enrollBody(palms, 1, y)), 200)
    expect(await untilIdentify(a.url, 1, 'right', { status: 'Found', member_id: y })).toBeLessThan(1000)
    // B's own duplicate check sees A's enrollment: X's palm cannot be enrolled for Y through B.
    const duplicate = await call(bUrl, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, enrollBody(palms, 0, y, ['left']))
    expectStatus(duplicate, 409)
  })

  it('a hand re-enrolled and a member deleted through one process change the other within one second', async () => {
    const z = await createMember(a, tenant, 'z')
    expectStatus(await call(a.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, enrollBody(palms, 2, z)), 200)
    await untilIdentify(bUrl, 2, 'left', { status: 'Found', member_id: z })
    expectStatus(await call(bUrl, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, enrollBody(palms, 3, z, ['left'])), 200)
    expect(await untilIdentify(a.url, 2, 'left', { status: 'NotFound', member_id: null })).toBeLessThan(1000)
    expect(await untilIdentify(a.url, 3, 'left', { status: 'Found', member_id: z })).toBeLessThan(1000)

    expectStatus(await call(bUrl, 'DELETE', `/v1/projects/${tenant.projectId}/members/${z}`), 204)
    expect(await untilIdentify(a.url, 2, 'right', { status: 'NotFound', member_id: null })).toBeLessThan(1000)
    expect(await untilIdentify(a.url, 3, 'left', { status: 'NotFound', member_id: null })).toBeLessThan(1000)
  })
  it('the same palm enrolled for two members through A and B at the same moment is accepted once (20 pairs at once)', async () => {
    expect(raceIdentities).toHaveLength(20)
    const pairs = await Promise.all(
      raceIdentities.map(async (identity) => ({
        identity,
        first: await createMember(a, tenant, `race ${identity} a`),
        second: await createMember(a, tenant, `race ${identity} b`),
      })),
    )
    const outcomes = await Promise.all(
      pairs.map(async ({ identity, first, second }) => {
        const [viaA, viaB] = await Promise.all([
          call(a.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, enrollBody(racePalms, identity, first)),
          call(bUrl, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, enrollBody(racePalms, identity, second)),
        ])
        return { identity, statuses: [viaA.status, viaB.status], codes: [viaA.body?.code, viaB.body?.code], winner: viaA.status === 200 ? first : second }
      }),
    )
    for (const outcome of outcomes) {
      expect([...outcome.statuses].sort(), `pair ${outcome.identity}: ${JSON.stringify(outcome)}`).toEqual([200, 409])
      expect(outcome.codes).toContain('duplicate_palm')
    }
    // Both processes identify each palm as the member that won it.
    for (const { identity, winner } of outcomes.slice(0, 5)) {
      for (const url of [a.url, bUrl]) {
        const answer = await call(url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, identifyBody(racePalms, identity, 'left'))
        expect(answer.body).toMatchObject({ status: 'Found', member_id: winner })
      }
    }
  }, 120_000)
})
