// API keys on the embedded database this process serves are read from a cache; these tests hold
// it to the promise of an uncached read: a change to a key, its project, environment or owner,
// made by any client of the database, shows on the very next request. On PostgreSQL (no cache)
// the same tests pass, and the query count shows which one ran.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type Sql } from '../../src/store/database.js'
import { usingPostgres } from '../support/database.js'
import { scrape, valueOf } from '../support/metrics.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

/** A client of the service's database that is not the service's: the CLI's way in. */
async function otherClient(svc: TestService): Promise<Sql> {
  if (svc.storage.databaseUrl) return createClient({ url: svc.storage.databaseUrl, max: 1 })
  const { port, password } = JSON.parse(await fs.readFile(path.join(svc.storage.dataDir, 'pglite.json'), 'utf8'))
  return createClient({ host: '127.0.0.1', port, password, max: 1 })
}

describe('API key lookups', () => {
  let svc: TestService
  let tenant: Tenant
  let other: Sql
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'lookup@example.com')
    other = await otherClient(svc)
  })
  afterAll(async () => {
    await other.end({ timeout: 1 })
    await svc.close()
  })

  const newKey = async (name: string) => {
    const created = await svc.request('POST', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token, body: { name, project_ids: null } })
    expectStatus(created, 201)
    return created.body as { id: string; key: string }
  }
  const getProject = (key: string, projectId = tenant.projectId) => svc.request('GET', `/v1/projects/${projectId}`, { auth: key })

  it('reads a key once while nothing changes (embedded), every time on PostgreSQL', async () => {
    const { key } = await newKey('counted')
    expectStatus(await getProject(key), 200)
    const before = valueOf(await scrape(svc), 'palmvein_db_query_duration_seconds')
    const requests = 40
    for (let i = 0; i < requests; i++) expectStatus(await getProject(key), 200)
    const queries = valueOf(await scrape(svc), 'palmvein_db_query_duration_seconds') - before
    // GET project needs no query beyond the key's; the rest are background work (audit, polls).
    if (usingPostgres) expect(queries).toBeGreaterThanOrEqual(requests)
    else expect(queries).toBeLessThan(requests / 2)
  })

  it('still checks the secret of a cached key', async () => {
    const { id, key } = await newKey('secret checked')
    expectStatus(await getProject(key), 200)
    const secret = key.split('.')[1]
    const wrong = `${id}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
    const refused = await getProject(wrong)
    expectStatus(refused, 401)
    expect(refused.body.code).toBe('unauthenticated')
    expectStatus(await getProject(key), 200)
  })

  it('refuses a key revoked by another client of the database on the very next request', async () => {
    const { id, key } = await newKey('revoked elsewhere')
    expectStatus(await getProject(key), 200)
    expectStatus(await getProject(key), 200)
    await other`UPDATE api_keys SET revoked_at = now() WHERE id = ${id}`
    const refused = await getProject(key)
    expectStatus(refused, 401)
    expect(refused.body.detail).toBe('the API key has been revoked')
  })

  it('refuses a key revoked in another client\'s transaction once it commits', async () => {
    const { id, key } = await newKey('revoked in a transaction')
    expectStatus(await getProject(key), 200)
    await other.begin(async (tx) => {
      await tx`UPDATE api_keys SET revoked_at = now() WHERE id = ${id}`
    })
    expectStatus(await getProject(key), 401)
  })

  it('sees a narrowed key scope and a changed project at once', async () => {
    const { id, key } = await newKey('narrowed')
    expectStatus(await getProject(key), 200)
    await other`UPDATE api_keys SET project_ids = ${[tenant.secondProjectId]}::uuid[] WHERE id = ${id}`
    expectStatus(await getProject(key), 403)
    expectStatus(await getProject(key, tenant.secondProjectId), 200)

    await other`UPDATE projects SET name = 'renamed elsewhere' WHERE id = ${tenant.secondProjectId}`
    const renamed = await getProject(key, tenant.secondProjectId)
    expectStatus(renamed, 200)
    expect(renamed.body.name).toBe('renamed elsewhere')
  })
})
