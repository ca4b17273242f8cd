import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadLocalIssuer } from '../../src/auth/identity-tokens.js'
import { createPalmTenant, type PalmTenant } from '../support/palms.js'
import { bootService, expectProblem, type TestService } from '../support/service.js'

// A new user's mistakes get answers that say what is wrong with the credential.
describe('credential answers', () => {
  let svc: TestService
  let tenant: PalmTenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'credentials@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  const members = (auth: string) => svc.request('GET', `/v1/projects/${tenant.projectId}/members`, { auth })

  it('says "unknown or revoked API key" for a key id with a wrong secret, of the right length or not', async () => {
    const [keyId, secret] = tenant.key.split('.')
    const flipped = `${keyId}.${secret[0] === 'A' ? 'B' : 'A'}${secret.slice(1)}`
    for (const credential of [flipped, `${keyId}.short`, `${keyId}.${secret}extra`]) {
      const answer = await members(credential)
      expectProblem(answer, 401, 'unauthenticated')
      expect(answer.body.detail).toBe('unknown or revoked API key')
    }
  })

  it("names the key id of a token from another data directory's development issuer", async () => {
    const elsewhere = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-other-issuer-'))
    try {
      const other = await loadLocalIssuer({ dataDir: elsewhere, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
      const ours = await loadLocalIssuer({ dataDir: svc.storage.dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
      const answer = await members(await other.sign('credentials@example.com', 600))
      expectProblem(answer, 401, 'unauthenticated')
      expect(answer.body.detail).toContain(`unknown key (kid ${other.keyId})`)
      expect(answer.body.detail).toContain('another issuer or data directory')
      expect(answer.body.detail).toContain(ours.keyId)
    } finally {
      await fs.rm(elsewhere, { recursive: true, force: true })
    }
  })

  it('says which claim is wrong, and when a token expired', async () => {
    const wrongAudience = await loadLocalIssuer({ dataDir: svc.storage.dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'someone-else' })
    const answer = await members(await wrongAudience.sign('credentials@example.com', 600))
    expectProblem(answer, 401, 'unauthenticated')
    expect(answer.body.detail).toBe("the identity token's aud claim is not the one this service expects")
    const expired = await members(await svc.token('credentials@example.com', -60))
    expect(expired.body.detail).toBe('the identity token has expired')
  })
})
