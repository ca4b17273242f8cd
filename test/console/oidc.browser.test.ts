// Signing in to the console by OpenID Connect, in Debian's Chromium, against a real OpenID
// provider (the `oidc-provider` package, run here with its development login and consent pages):
// the console runs the authorization code flow with PKCE, the provider's ID token is what the API
// accepts (its JWKS, issuer and audience configured as a deployment would), and the token stays in
// the page's memory. Sign-out, and the page saying the session ended when the ID token expires: the
// provider issues the second sign-in a short-lived ID token, and the page's real clock runs out (a
// faked page clock once left the page stuck under CI load: Preact's effects wait on faked timers).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { bootService, type TestService } from '../support/service.js'
import { openConsoleBrowser, type ConsoleBrowser } from './browser.js'

const STEP_MS = 60_000
const CLIENT_ID = 'palmvein-console'
const ID_TOKEN_SECONDS = 15 * 60
/** Long enough for the console to load its page under load before the token ends, short enough to wait for. */
const SHORT_ID_TOKEN_SECONDS = 20

describe(`console sign-in by OpenID Connect in Chromium (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let issuerServer: http.Server
  let issuer: string
  let svc: TestService
  let chromium: ConsoleBrowser
  let page: Page
  const tokenRequests: string[] = []
  let idTokenSeconds = ID_TOKEN_SECONDS

  beforeAll(async () => {
    // The provider's address first: the service is configured with it, and the provider with the service's.
    issuerServer = http.createServer()
    await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve))
    issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`
    svc = await bootService({
      config: { jwksUrl: `${issuer}/jwks`, jwtIssuer: issuer, jwtAudience: CLIENT_ID, consoleOidcClientId: CLIENT_ID },
    })
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          token_endpoint_auth_method: 'none',
          redirect_uris: [`${svc.url}/console/`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      findAccount: (_context, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
      ttl: { IdToken: () => idTokenSeconds, AccessToken: ID_TOKEN_SECONDS, Grant: 3600, Session: 3600, Interaction: 600 },
      clientBasedCORS: (_context, origin) => origin === svc.url,
      cookies: { keys: ['a test provider cookie key'] },
    })
    const handle = provider.callback()
    issuerServer.on('request', (request, response) => {
      if (request.url?.startsWith('/token')) tokenRequests.push(`${request.method} ${request.headers.origin ?? ''}`)
      void handle(request, response)
    })
    chromium = await openConsoleBrowser(svc.url)
    page = chromium.page
  }, 120_000)

  afterAll(async () => {
    await chromium?.close()
    await svc?.close()
    issuerServer?.closeAllConnections()
    await new Promise((resolve) => issuerServer?.close(resolve))
  })

  /** The provider's development login and consent pages, as a person fills them. */
  async function signInAtProvider(login: string) {
    await page.getByRole('button', { name: 'Sign in with OpenID Connect' }).click()
    await page.waitForURL(`${issuer}/**`)
    await page.getByPlaceholder('Enter any login').fill(login)
    await page.getByPlaceholder('and password').fill('any password')
    await page.getByRole('button', { name: 'Sign-in' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
  }

  it(
    'offers sign-in at the issuer, then signs in through its login and consent pages and calls the API with its ID token',
    async () => {
      await page.goto(`${svc.url}/console/`)
      await page.getByRole('heading', { name: 'Sign in to the palmvein console' }).waitFor()
      expect(await page.getByText('identity provider').textContent()).toContain(new URL(issuer).host)
      await chromium.scan('oidc-sign-in')

      await signInAtProvider('admin@example.com')
      await page.getByRole('heading', { name: 'Organizations' }).waitFor()
      // Back on the console, the code and state are gone from the address, and no storage holds anything.
      expect(page.url()).toBe(`${svc.url}/console/#/`)
      expect(await page.getByText('Signed in as').textContent()).toContain('admin@example.com')
      expect(await page.evaluate('localStorage.length + sessionStorage.length')).toBe(0)
      // Cookies are per host, not port: the provider's own (its session) are here too, but none of the console's.
      expect((await chromium.context.cookies(svc.url)).filter((cookie) => cookie.name.startsWith('palmvein'))).toEqual([])
      // The code went to the provider's token endpoint from the page itself (CORS, allowed for the registered origin).
      expect(tokenRequests).toEqual([`POST ${svc.url}`])

      // The API accepts the provider's ID token: the organization is created, and its admin is the provider's subject.
      await page.getByLabel('Name', { exact: true }).fill('Federated')
      await page.getByRole('button', { name: 'Create organization' }).click()
      await page.getByRole('heading', { name: 'Environments' }).waitFor()
      const [admin] = await svc.service.app.sql<
        { subject: string }[]
      >`SELECT subject FROM organization_admins JOIN organizations o ON o.id = org_id WHERE o.name = 'Federated'`
      expect(admin?.subject).toBe('admin@example.com')
      await chromium.scan('oidc-organization')
    },
    STEP_MS,
  )

  it(
    'signs out, and says the session ended when the ID token expires under an open page',
    async () => {
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { name: 'You are signed out' }).waitFor()

      // Signing in again: the provider remembers the person and the consent, so the browser comes
      // straight back, to the page it left, with an ID token that ends in SHORT_ID_TOKEN_SECONDS.
      idTokenSeconds = SHORT_ID_TOKEN_SECONDS
      const clicked = Date.now()
      await page.getByRole('button', { name: 'Sign in with OpenID Connect' }).click()
      await page.getByRole('heading', { name: 'Environments' }).waitFor()
      expect(page.url()).toMatch(new RegExp(`^${svc.url}/console/#/orgs/[\\w-]+$`))
      await page.getByRole('heading', { name: 'Your session ended' }).waitFor({ timeout: (SHORT_ID_TOKEN_SECONDS + 30) * 1000 })
      // Not before the token's end: it was issued after the click, its expiry rounded to the second.
      expect(Date.now() - clicked).toBeGreaterThanOrEqual((SHORT_ID_TOKEN_SECONDS - 1) * 1000)
      await page.getByRole('button', { name: 'Sign in with OpenID Connect' }).waitFor()
      await chromium.scan('oidc-session-ended')
      expect(chromium.errors).toEqual([])
    },
    STEP_MS + SHORT_ID_TOKEN_SECONDS * 1000,
  )
})
