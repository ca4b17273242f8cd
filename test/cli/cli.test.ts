import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SignJWT, importJWK, type JWK } from 'jose'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { freePort, runCli, startServeProcess } from '../support/process.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

describe('palmvein CLI', () => {
  let storage: TestStorage
  let env: Record<string, string | undefined>
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
    env = { PALMVEIN_DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl ?? undefined }
  })
  afterAll(async () => {
    await storage.cleanup()
  })

  it('says one line and a hint, exit 2, on an unknown command or a missing flag', async () => {
    const unknown = await runCli(['frobnicate'], env)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe("palmvein: unknown command 'frobnicate'\nsee 'palmvein --help'\n")
    const missing = await runCli(['token'], env)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/--sub/)
  })

  it('refuses an invalid configuration with a clear message', async () => {
    const result = await runCli(['migrate'], { ...env, PORT: 'eighty' })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/configuration error: PORT must be an integer/)
  })

  it('migrate applies nothing on a migrated database', async () => {
    const result = await runCli(['migrate'], env)
    expect(result.stderr).toBe('')
    expect(result.stdout.trim()).toBe('schema up to date')
    expect(result.code).toBe(0)
  })

  describe('with the service running in the same process tree', () => {
    let svc: TestService
    beforeAll(async () => {
      svc = await bootService({ storage })
    })
    afterAll(async () => {
      await svc.stop()
    })

    it('a token from `palmvein token` is accepted; tampered and expired ones get 401 problem+json', async () => {
      const minted = await runCli(['token', '--sub', 'cli-admin@example.com', '--ttl', '600'], env)
      expect(minted.code).toBe(0)
      const token = minted.stdout.trim()
      expectStatus(await svc.request('GET', '/v1/organizations', { auth: token }), 200)

      const [header, payload, signature] = token.split('.')
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'someone-else' })).toString('base64url')
      const tampered = await svc.request('GET', '/v1/organizations', { auth: `${header}.${forged}.${signature}` })
      expectStatus(tampered, 401)
      expect(tampered.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(tampered.headers.get('www-authenticate')).toMatch(/^Bearer/)
      expect(tampered.body.code).toBe('unauthenticated')

      const jwk = JSON.parse(await fs.readFile(path.join(storage.dataDir, 'identity-issuer.jwk.json'), 'utf8')) as JWK
      const expired = await new SignJWT({})
        .setProtectedHeader({ alg: 'EdDSA' })
        .setSubject('cli-admin@example.com')
        .setIssuer('palmvein-local')
        .setAudience('palmvein')
        .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
        .sign(await importJWK(jwk, 'EdDSA'))
      const refused = await svc.request('GET', '/v1/organizations', { auth: expired })
      expectStatus(refused, 401)
      expect(refused.body.detail).toMatch(/expired/)
    })

    it('`org create` prints the organization; its admin sees it through the API', async () => {
      const created = await runCli(['org', 'create', '--name', 'Platform EU', '--admin', 'ops@example.com', '--platform'], env)
      expect(created.code).toBe(0)
      const org = JSON.parse(created.stdout)
      expect(org).toMatchObject({ name: 'Platform EU', kind: 'platform' })
      const listed = await svc.request('GET', '/v1/organizations', { auth: await svc.token('ops@example.com') })
      expect(listed.body).toEqual([org])
    })

    it("`project plan` is the operator's plan change: the admin could not make it, the project and its rate limit follow at once", async () => {
      const token = await svc.token('plan-admin@example.com')
      const org = (await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'Shop' } })).body
      const project = (await svc.request('POST', `/v1/organization/${org.id}/projects`, { auth: token, body: { name: 'Till', plan: 'sandbox' } })).body
      expectStatus(await svc.request('PATCH', `/v1/organization/${org.id}/projects/${project.id}`, { auth: token, body: { plan: 'business' } }), 403)

      const set = await runCli(['project', 'plan', '--project', project.id, '--plan', 'business'], env)
      expect(set.stderr).toBe('')
      expect(set.code).toBe(0)
      expect(JSON.parse(set.stdout)).toMatchObject({ id: project.id, plan: { id: 'business', headcount: 10_000, daily_request_limit: 100_000 } })
      const read = await svc.request('GET', `/v1/projects/${project.id}`, { auth: token })
      expect(read.body.plan.id).toBe('business')
      expect(read.headers.get('ratelimit-limit')).toBe('100')

      for (const [args, message] of [
        [['--project', project.id, '--plan', 'platinum'], /--plan must be one of sandbox, business, enterprise/],
        [['--project', '0190a0a0-0000-7000-8000-000000000000', '--plan', 'business'], /does not exist/],
      ] as const) {
        const refused = await runCli(['project', 'plan', ...args], env)
        expect(refused.code).toBe(2)
        expect(refused.stderr).toMatch(message)
      }
    })
  })

  it('`org create` works while `palmvein serve` runs on the same data directory (it joins its database); serve exposes metrics where PALMVEIN_METRICS_PORT says', async () => {
    const metricsPort = await freePort()
    const server = await startServeProcess({ ...env, PORT: '0', HOST: '127.0.0.1', PALMVEIN_METRICS_PORT: String(metricsPort) })
    try {
      expect(server.output()).toContain(`Metrics: Prometheus scrapes http://127.0.0.1:${metricsPort}/metrics`)
      const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(scraped.status).toBe(200)
      expect(await scraped.text()).toContain('# TYPE palmvein_http_requests_total counter')
      const created = await runCli(['org', 'create', '--name', 'Joined', '--admin', 'joined@example.com'], env)
      expect(created.stderr).toBe('')
      expect(created.code).toBe(0)
      const token = (await runCli(['token', '--sub', 'joined@example.com'], env)).stdout.trim()
      const response = await fetch(`${server.url}/v1/organizations`, { headers: { authorization: `Bearer ${token}` } })
      expect(await response.json()).toEqual([JSON.parse(created.stdout)])
    } finally {
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    }
  })
})
