// The web console as the service serves it (on each HTTP transport): its files with their caching
// and security headers, the answer when it was not built, and the sign-in by one-time link.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueConsoleSignInLink } from '../../src/auth/console-sign-in.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { usingPostgres } from '../support/database.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'

const codeOf = (url: string) => new URL(url).hash.replace('#sign-in=', '')
const cookieOf = (setCookie: string | null) => (setCookie ?? '').split(';')[0]

describe(`console (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let built: string
  beforeAll(async () => {
    // A console build of our own (two hashed files), so this suite does not depend on the real build.
    built = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-console-'))
    fs.mkdirSync(path.join(built, 'assets'))
    fs.writeFileSync(path.join(built, 'index.html'), '<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>')
    fs.writeFileSync(path.join(built, 'assets/index-abc123.js'), 'console.log("console")')
    svc = await bootService({ config: { consoleDir: built } })
  })
  afterAll(async () => {
    await svc?.close()
    fs.rmSync(built, { recursive: true, force: true })
  })

  const issue = (subject: string, ttlSeconds?: number) => issueConsoleSignInLink(svc.service.app.sql, svc.service.app.config, subject, svc.url, ttlSeconds)

  describe('files', () => {
    it('serves index.html at /console/ and /console, revalidated on every load, under a strict CSP', async () => {
      for (const path of ['/console/', '/console']) {
        const page = await svc.request('GET', path)
        expectStatus(page, 200, path)
        expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
        expect(page.text).toContain('/console/assets/index-abc123.js')
        expect(page.headers.get('cache-control')).toBe('no-cache')
        expect(page.headers.get('etag')).toMatch(/^"[\w-]+"$/)
        const csp = page.headers.get('content-security-policy')!
        expect(csp).toContain("frame-ancestors 'none'")
        expect(csp).toContain("script-src 'self'")
        expect(csp).not.toContain('unsafe-inline')
        expect(page.headers.get('x-content-type-options')).toBe('nosniff')
      }
    })

    it('answers 304 to a matching If-None-Match, and caches hashed assets for a year', async () => {
      const page = await svc.request('GET', '/console/')
      const again = await svc.request('GET', '/console/', { headers: { 'if-none-match': page.headers.get('etag')! } })
      expect(again.status).toBe(304)
      expect(again.text).toBe('')
      const asset = await svc.request('GET', '/console/assets/index-abc123.js')
      expectStatus(asset, 200)
      expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(asset.text).toBe('console.log("console")')
      const revalidated = await svc.request('GET', '/console/assets/index-abc123.js', { headers: { 'if-none-match': `W/"x", ${asset.headers.get('etag')}` } })
      expect(revalidated.status).toBe(304)
    })

    it('answers 404 problem+json for an unknown asset and 400 for a name that is not a file name', async () => {
      expectProblem(await svc.request('GET', '/console/assets/index-zzz.js'), 404, 'not_found')
      expectProblem(await svc.request('GET', '/console/assets/..%2Findex.html'), 400, 'invalid_request')
    })
  })

  describe('sign-in by one-time link', () => {
    it('redeems a link once for a session cookie and a token the public API accepts', async () => {
      const link = await issue('alice@example.com')
      expect(link.url).toMatch(new RegExp(`^${svc.url}/console/#sign-in=[0-9a-f-]{36}\\.[\\w-]{43}$`))
      expect(link.expiresAt.getTime() - Date.now()).toBeGreaterThan(9 * 60_000)
      const signedIn = await svc.request('POST', '/console/session', { body: { code: codeOf(link.url) } })
      expectStatus(signedIn, 200)
      expect(signedIn.body).toMatchObject({ subject: 'alice@example.com', token: expect.any(String) })
      expect(signedIn.headers.get('cache-control')).toBe('no-store')
      const setCookie = signedIn.headers.get('set-cookie')!
      expect(setCookie).toMatch(/^palmvein_console_session=[0-9a-f-]{36}\.[\w-]{43}; Path=\/console\/session; Max-Age=28800; HttpOnly; SameSite=Strict$/)
      const orgs = await svc.request('POST', '/v1/organizations', { auth: signedIn.body.token, body: { name: 'Console Org' } })
      expectStatus(orgs, 201)
      // Single use: the second redemption is refused, whoever tries it.
      const again = await svc.request('POST', '/console/session', { body: { code: codeOf(link.url) } })
      expectProblem(again, 401, 'unauthenticated')
      expect(again.body.detail).toMatch(/already used or expired/)
      expect(again.headers.get('set-cookie')).toBeNull()
    })

    it('renews the token from the session cookie, and signing out ends the session', async () => {
      const link = await issue('bob@example.com')
      const signedIn = await svc.request('POST', '/console/session', { body: { code: codeOf(link.url) } })
      const cookie = cookieOf(signedIn.headers.get('set-cookie'))
      // The page's probe on load: 200 with or without a session, so a signed-out page logs no failed request.
      const probed = await svc.request('GET', '/console/session', { headers: { cookie } })
      expectStatus(probed, 200)
      expect(probed.body).toEqual({
        sign_in: 'link',
        oidc: null,
        session: { subject: 'bob@example.com', session_expires_at: signedIn.body.session_expires_at },
      })
      expect(probed.headers.get('cache-control')).toBe('no-store')
      expect((await svc.request('GET', '/console/session')).body).toEqual({ sign_in: 'link', oidc: null, session: null })
      const renewed = await svc.request('POST', '/console/session/token', { headers: { cookie } })
      expectStatus(renewed, 200)
      expect(renewed.body.subject).toBe('bob@example.com')
      expectStatus(await svc.request('GET', '/v1/organizations', { auth: renewed.body.token }), 200)
      const out = await svc.request('DELETE', '/console/session', { headers: { cookie } })
      expectStatus(out, 204)
      expect(out.headers.get('set-cookie')).toMatch(/^palmvein_console_session=; Path=\/console\/session; Max-Age=0;/)
      expectProblem(await svc.request('POST', '/console/session/token', { headers: { cookie } }), 401, 'unauthenticated')
      expectProblem(await svc.request('POST', '/console/session/token'), 401, 'unauthenticated')
      expect((await svc.request('GET', '/console/session', { headers: { cookie } })).body.session).toBeNull()
    })

    it('refuses an expired link, a wrong secret (which spends the link), and an expired session', async () => {
      const shortLived = await issue('carol@example.com', 1)
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      expectProblem(await svc.request('POST', '/console/session', { body: { code: codeOf(shortLived.url) } }), 401, 'unauthenticated')

      const guessed = await issue('carol@example.com')
      const [id] = codeOf(guessed.url).split('.')
      expectProblem(await svc.request('POST', '/console/session', { body: { code: `${id}.${'A'.repeat(43)}` } }), 401, 'unauthenticated')
      expectProblem(await svc.request('POST', '/console/session', { body: { code: codeOf(guessed.url) } }), 401, 'unauthenticated')
      expectProblem(await svc.request('POST', '/console/session', { body: { code: 'not a code' } }), 401, 'unauthenticated')
      expectProblem(await svc.request('POST', '/console/session', { body: { code: 'x', extra: 1 } }), 400, 'invalid_request')

      const link = await issue('carol@example.com')
      const signedIn = await svc.request('POST', '/console/session', { body: { code: codeOf(link.url) } })
      const cookie = cookieOf(signedIn.headers.get('set-cookie'))
      const sessionId = cookie.split('=')[1].split('.')[0]
      await svc.service.app.sql`UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE id = ${sessionId}`
      const ended = await svc.request('POST', '/console/session/token', { headers: { cookie } })
      expectProblem(ended, 401, 'unauthenticated')
      expect(ended.body.detail).toMatch(/session has ended/)
    })

    it('refuses session requests another site starts (Fetch Metadata), on top of SameSite=Strict', async () => {
      const link = await issue('dave@example.com')
      const crossSite = await svc.request('POST', '/console/session', { body: { code: codeOf(link.url) }, headers: { 'sec-fetch-site': 'cross-site' } })
      expectProblem(crossSite, 403, 'forbidden')
      // Refused before it was redeemed: the link still works from the console itself.
      const sameOrigin = await svc.request('POST', '/console/session', { body: { code: codeOf(link.url) }, headers: { 'sec-fetch-site': 'same-origin' } })
      expectStatus(sameOrigin, 200)
      const cookie = cookieOf(sameOrigin.headers.get('set-cookie'))
      expectProblem(await svc.request('POST', '/console/session/token', { headers: { cookie, 'sec-fetch-site': 'same-site' } }), 403, 'forbidden')
      expectProblem(await svc.request('DELETE', '/console/session', { headers: { cookie, 'sec-fetch-site': 'cross-site' } }), 403, 'forbidden')
      expectStatus(await svc.request('POST', '/console/session/token', { headers: { cookie } }), 200)
    })

    it('issues no link where the API takes tokens from a configured issuer', async () => {
      const config = { ...svc.service.app.config, jwksUrl: 'https://issuer.example.com/.well-known/jwks.json' }
      await expect(issueConsoleSignInLink(svc.service.app.sql, config, 'erin@example.com', svc.url)).rejects.toMatchObject({ code: 'forbidden' })
      await expect(issue('', 60)).rejects.toMatchObject({ code: 'invalid_request' })
      await expect(issue('erin@example.com', 0)).rejects.toMatchObject({ code: 'invalid_request' })
    })
  })

  describe('with OpenID Connect', () => {
    const oidc = {
      jwksUrl: 'https://id.example.com/jwks',
      jwtIssuer: 'https://id.example.com',
      jwtAudience: 'palmvein-console',
      consoleOidcClientId: 'palmvein-console',
    }

    it('tells the page to sign in at the issuer, lets the page reach that origin only, and issues no session', async () => {
      await svc.restart(oidc)
      const probed = await svc.request('GET', '/console/session')
      expectStatus(probed, 200)
      expect(probed.body).toEqual({
        sign_in: 'oidc',
        oidc: { issuer: 'https://id.example.com', client_id: 'palmvein-console', scope: 'openid' },
        session: null,
      })
      const csp = (await svc.request('GET', '/console/')).headers.get('content-security-policy')!
      expect(csp).toContain("connect-src 'self' https://id.example.com;")
      expect(csp).toContain("script-src 'self';")
      expectProblem(await svc.request('POST', '/console/session', { body: { code: 'a.b' } }), 403, 'forbidden')
      expectProblem(await svc.request('GET', '/console/session', { headers: { 'sec-fetch-site': 'cross-site' } }), 403, 'forbidden')
    })

    it("refuses to start when the API would not accept the console's ID tokens", () => {
      for (const wrong of [{ jwksUrl: null }, { jwtAudience: 'palmvein' }, { jwtIssuer: 'not a url' }]) {
        expect(() => loadConfig({ ...oidc, ...wrong }, {}), JSON.stringify(wrong)).toThrow(ConfigError)
      }
      expect(loadConfig(oidc, {}).consoleOidcClientId).toBe('palmvein-console')
    })
  })

  // Last: it restarts the service (on the same storage, so no second fresh database) without a build.
  describe('without a built console', () => {
    it('says how to build the console, and still serves the API', async () => {
      await svc.restart({ consoleDir: path.join(built, 'missing') })
      const page = await svc.request('GET', '/console/')
      expectProblem(page, 503, 'unavailable')
      expect(page.body.detail).toMatch(/not built.*npm run build/)
      expectProblem(await svc.request('GET', '/console/assets/index-abc123.js'), 503, 'unavailable')
      expectStatus(await svc.request('GET', '/livez'), 200)
      expectStatus(await svc.request('GET', '/v1/organizations', { auth: await svc.token('a@example.com') }), 200)
    })
  })
})
