// `palmvein console --sub`: the one-time sign-in link an operator prints, redeemed once by the
// service it names (the console's own POST /console/session) for a token the public API accepts.
import { describe, expect, it } from 'vitest'
import { useCliTenant } from '../support/cli-tenant.js'
import { runCli } from '../support/process.js'
import { expectProblem, expectStatus } from '../support/service.js'

const cli = useCliTenant('console-cli@example.com')

describe('palmvein console', () => {
  it('prints a link to the service that signs the subject in once', async () => {
    const result = await runCli(['console', '--sub', 'operator@example.com', '--url', cli.svc.url], cli.env)
    expect(result.code, result.stderr).toBe(0)
    const url = result.stdout.trim()
    expect(url).toMatch(new RegExp(`^${cli.svc.url}/console/#sign-in=[0-9a-f-]{36}\\.[\\w-]{43}$`))
    expect(result.stderr).toMatch(/signs in operator@example\.com once, until \d{4}-/)
    const code = url.split('#sign-in=')[1]
    const signedIn = await cli.svc.request('POST', '/console/session', { body: { code } })
    expectStatus(signedIn, 200)
    expect(signedIn.body.subject).toBe('operator@example.com')
    expectStatus(await cli.svc.request('GET', '/v1/organizations', { auth: signedIn.body.token }), 200)
    expectProblem(await cli.svc.request('POST', '/console/session', { body: { code } }), 401, 'unauthenticated')
  }, 60_000)

  it('refuses with an external token issuer: one line, exit 2', async () => {
    const result = await runCli(['console', '--sub', 'operator@example.com'], { ...cli.env, PALMVEIN_JWKS_URL: 'https://issuer.example/jwks' })
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  }, 60_000)
})
