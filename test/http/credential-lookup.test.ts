// API keys and device tokens on the embedded database this process serves are read from a cache;
// these tests hold it to the promise of an uncached read: a change to a key, a device, their
// project, environment or owner, made by any client of the database, shows on the very next
// request. On PostgreSQL (no cache) the same tests pass, and the query count shows which one ran.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type Sql } from '../../src/store/engine/database.js'
import { usingPostgres } from '../support/database.js'
import { scrape, valueOf } from '../support/metrics.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal, type Terminal } from '../support/terminals.js'

/** A client of the service's database that is not the service's: the CLI's way in. */
async function otherClient(svc: TestService): Promise<Sql> {
  if (svc.storage.databaseUrl) return createClient({ url: svc.storage.databaseUrl, max: 1 })
  const { port, password } = JSON.parse(await fs.readFile(path.join(svc.storage.dataDir, 'pglite.json'), 'utf8'))
  return createClient({ host: '127.0.0.1', port, password, max: 1 })
}

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

/** Queries the service ran while `work` did (its own SQL, counted by its metrics). */
async function queriesDuring(work: () => Promise<void>): Promise<number> {
  const before = valueOf(await scrape(svc), 'palmvein_db_query_duration_seconds')
  await work()
  return valueOf(await scrape(svc), 'palmvein_db_query_duration_seconds') - before
}

describe('API key lookups', () => {
  const newKey = async (name: string) => {
    const created = await svc.request('POST', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token, body: { name, project_ids: null } })
    expectStatus(created, 201)
    return created.body as { id: string; key: string }
  }
  const getProject = (key: string, projectId = tenant.projectId) => svc.request('GET', `/v1/projects/${projectId}`, { auth: key })

  it('reads a key once while nothing changes (embedded), every time on PostgreSQL', async () => {
    const { key } = await newKey('counted')
    expectStatus(await getProject(key), 200)
    const requests = 40
    const queries = await queriesDuring(async () => {
      for (let i = 0; i < requests; i++) expectStatus(await getProject(key), 200)
    })
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

  it("refuses a key revoked in another client's transaction once it commits", async () => {
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

describe('device token lookups', () => {
  // Server lookup is off for the project until a test turns it on: the terminal's identify then
  // answers 403 server_lookup_disabled after authenticating the device and reading its project,
  // and a capture that is not PVT1 answers 400 once it is on. Neither touches the gallery.
  const identify = (terminal: Terminal) =>
    svc.request('POST', '/v1/device-com/identify', {
      // As long as a PVT1 template (the schema's rule) but not one (the handler's): it reaches access.
      auth: terminal.deviceToken,
      body: { palm: { identify_capture: Buffer.alloc(152, 'not a capture').toString('base64') } },
    })
  // Terminals are linked to sandbox projects only.
  let sandbox: Tenant
  beforeAll(async () => {
    sandbox = await createTenant(svc, 'terminals@example.com', { plan: 'sandbox' })
    for (const projectId of [sandbox.projectId, sandbox.secondProjectId]) await liftRateLimits(svc, projectId)
  })
  const newTerminal = async (name: string) => {
    await other`UPDATE projects SET enable_server_lookup = false WHERE id = ${sandbox.projectId}`
    return linkTerminal(svc, sandbox.token, sandbox.projectId, { mode: 'access', name })
  }

  it('reads a device and its project once while nothing changes (embedded), every time on PostgreSQL', async () => {
    const terminal = await newTerminal('counted')
    expectProblem(await identify(terminal), 403, 'server_lookup_disabled')
    const requests = 40
    const queries = await queriesDuring(async () => {
      for (let i = 0; i < requests; i++) expectProblem(await identify(terminal), 403, 'server_lookup_disabled')
    })
    if (usingPostgres) expect(queries).toBeGreaterThanOrEqual(requests)
    else expect(queries).toBeLessThan(requests / 2)
  })

  it('still checks the secret of a cached device token', async () => {
    const terminal = await newTerminal('secret checked')
    expectProblem(await identify(terminal), 403, 'server_lookup_disabled')
    const last = terminal.deviceToken.at(-1)
    const wrong = { ...terminal, deviceToken: `${terminal.deviceToken.slice(0, -1)}${last === 'A' ? 'B' : 'A'}` }
    expectProblem(await identify(wrong), 401, 'unauthenticated')
    expectProblem(await identify(terminal), 403, 'server_lookup_disabled')
  })

  it('refuses a device disabled, or its token replaced, by another client of the database on the very next request', async () => {
    const disabled = await newTerminal('disabled elsewhere')
    expectProblem(await identify(disabled), 403, 'server_lookup_disabled')
    await other`UPDATE devices SET enabled = false WHERE id = ${disabled.deviceId}`
    const refused = await identify(disabled)
    expectProblem(refused, 403, 'forbidden')
    expect(refused.body.detail).toBe('this device is disabled')

    const rotated = await newTerminal('token replaced elsewhere')
    expectProblem(await identify(rotated), 403, 'server_lookup_disabled')
    await other.begin(async (tx) => {
      await tx`UPDATE devices SET token_hash = sha256(token_hash) WHERE id = ${rotated.deviceId}`
    })
    expectProblem(await identify(rotated), 401, 'unauthenticated')

    const deleted = await newTerminal('deleted elsewhere')
    expectProblem(await identify(deleted), 403, 'server_lookup_disabled')
    await other`DELETE FROM devices WHERE id = ${deleted.deviceId}`
    expectProblem(await identify(deleted), 401, 'unauthenticated')
  })

  it("sees its project's changes and a move to another project at once", async () => {
    await other`UPDATE projects SET enable_server_lookup = false WHERE id = ${sandbox.secondProjectId}`
    const terminal = await newTerminal('project changed')
    expectProblem(await identify(terminal), 403, 'server_lookup_disabled')
    await other`UPDATE projects SET enable_server_lookup = true WHERE id = ${sandbox.projectId}`
    expectProblem(await identify(terminal), 400, 'capture_invalid')
    expectProblem(await identify(terminal), 400, 'capture_invalid')

    // Moved to the second project, which has server lookup off: the terminal searches there now.
    await other`UPDATE devices SET project_id = ${sandbox.secondProjectId} WHERE id = ${terminal.deviceId}`
    expectProblem(await identify(terminal), 403, 'server_lookup_disabled')
  })
})
