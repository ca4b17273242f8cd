// The console as a person uses it: Debian's Chromium (headless, through playwright-core; no
// browser download) against the real service and its built console. Sign-in by one-time link,
// create an organization, environment and project, an API key whose plaintext is gone once the
// page is left, a webhook endpoint to a local receiver (test event, delivery log filtered by status and event type, attempts,
// resend, recover, delete), a member, a synthetic person enrolled and identified (Found, then NotFound), an
// erasure, a terminal linked and an enrollment session on it followed live, the audit trail (verified, filtered, exported, then refused once tampered with),
// sign-out, and the page saying the session ended. Every page passes an axe scan with no
// serious or critical violation; screenshots go to test-output/console/ (git-ignored).
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueConsoleSignInLink } from '../../src/auth/console-sign-in.js'
import { usingPostgres } from '../support/database.js'
import { bootService, type TestService } from '../support/service.js'
import { startReceiver, type Receiver } from '../webhooks/receivers.js'
import { enrollBody, population } from '../support/palms.js'
import { liftRateLimits, registerTerminal } from '../support/terminals.js'
import { openConsoleBrowser, type ConsoleBrowser } from './browser.js'

const STEP_MS = 60_000
/** How long the last sign-in's session is left to run: long enough for a reload under load, short enough to wait for. */
const SESSION_LEFT_SECONDS = 15

describe(`console in Chromium (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let chromium: ConsoleBrowser
  let page: Page
  let context: BrowserContext
  let receiver: Receiver

  const signInLink = async (subject: string) => (await issueConsoleSignInLink(svc.service.app.sql, svc.service.app.config, subject, svc.url)).url
  const scan = (name: string) => chromium.scan(name)

  beforeAll(async () => {
    // A business plan (100 requests a minute): a person clicking through a sandbox project (5) would be rate limited.
    // The webhook worker runs, and may deliver to this machine (the test's receiver).
    svc = await bootService({ config: { selfServicePlans: ['sandbox', 'business'], webhookWorker: true, webhookAllowLocalhost: true, webhookTimeoutMs: 2000 } })
    chromium = await openConsoleBrowser(svc.url)
    ;({ page, context } = chromium)
  }, 120_000)

  afterAll(async () => {
    await receiver?.close()
    await chromium?.close()
    await svc?.close()
  })

  it(
    'asks to sign in without a session, then signs in by a one-time link that leaves no trace in the address or storage',
    async () => {
      await page.goto(`${svc.url}/console/`)
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in to the palmvein console')
      await scan('sign-in')
      await page.goto(await signInLink('admin@example.com'))
      await page.getByRole('heading', { name: 'Organizations' }).waitFor()
      expect(page.url()).toBe(`${svc.url}/console/#/`)
      expect(await page.getByText('Signed in as').textContent()).toContain('admin@example.com')
      expect(await page.evaluate('localStorage.length + sessionStorage.length')).toBe(0)
      const [cookie] = await context.cookies()
      expect(cookie).toMatchObject({ name: 'palmvein_console_session', httpOnly: true, sameSite: 'Strict', path: '/console/session' })
      expect(await page.evaluate('document.cookie')).toBe('')
      // The first load asked whether there was a session without a failed request.
      expect(chromium.errors).toEqual([])
    },
    STEP_MS,
  )

  it(
    'creates an organization, an environment and a project',
    async () => {
      await page.getByLabel('Name', { exact: true }).fill('Acme')
      await page.getByRole('button', { name: 'Create organization' }).click()
      await page.getByRole('heading', { name: 'Environments' }).waitFor()
      await page.getByLabel('Environment name').fill('HQ')
      await page.getByRole('button', { name: 'Create environment' }).click()
      await page.getByRole('cell', { name: 'HQ' }).waitFor()
      await page.getByLabel('Project name').fill('Shop')
      await page.getByLabel('Plan').selectOption('business')
      await page.getByRole('button', { name: 'Create project' }).click()
      await page.getByRole('link', { name: 'Shop' }).waitFor()
      await scan('organization')
    },
    STEP_MS,
  )

  it(
    'creates an API key whose plaintext is shown once, gone once the page is left',
    async () => {
      await page.getByRole('link', { name: 'Shop' }).click()
      await page.getByRole('heading', { name: 'API keys' }).waitFor()
      await page.getByLabel('Key name').fill('checkout')
      await page.getByRole('button', { name: 'Create key' }).click()
      const plaintext = page.getByTestId('plaintext-key')
      expect(await plaintext.textContent()).toMatch(/^[0-9a-f-]{36}\.[\w-]{43}$/)
      await page.getByRole('cell', { name: 'checkout' }).waitFor()
      await scan('api-keys')
      await page.getByRole('link', { name: 'Members' }).click()
      await page.getByRole('heading', { name: 'Members' }).waitFor()
      await page.getByRole('link', { name: 'API keys' }).click()
      await page.getByRole('cell', { name: 'checkout' }).waitFor()
      expect(await page.getByTestId('plaintext-key').count()).toBe(0)
      expect(await page.content()).not.toMatch(/[0-9a-f-]{36}\.[\w-]{43}/)
    },
    STEP_MS,
  )

  it(
    'creates a webhook endpoint to a local receiver, sees the test event delivered and its attempt, resends it, recovers, deletes the endpoint',
    async () => {
      receiver = await startReceiver()
      await page.getByRole('link', { name: 'Webhooks' }).click()
      await page.getByText('No endpoint yet').waitFor()
      await page.getByLabel('Endpoint URL').fill(receiver.url)
      await page.getByLabel('demo.scan.success').check()
      await page.getByRole('button', { name: 'Create endpoint' }).click()
      expect(await page.getByTestId('webhook-secret').textContent()).toMatch(/^whsec_[\w+/=]{40,}$/)
      await page.getByRole('cell', { name: 'enrollment.completed, demo.scan.success' }).waitFor()
      await scan('webhooks')

      await page.getByRole('link', { name: receiver.url }).click()
      await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor()
      expect(await page.content()).not.toContain('whsec_')
      await page.getByRole('button', { name: 'Send a test event' }).click()
      await expect.poll(() => receiver.requests.length).toBe(1)
      const sent = JSON.parse(receiver.requests[0].body)
      expect(sent.event_type).toBe('webhook.test')
      // The log shows what the worker recorded once the page asks again.
      await expect
        .poll(async () => {
          await page.getByRole('button', { name: 'Show deliveries' }).click()
          return page.getByTestId('delivery-status').allTextContents()
        })
        .toEqual(['success'])
      await page.getByRole('button', { name: 'Attempts' }).click()
      const attempt = page
        .getByRole('table', { name: /Attempts of delivery/ })
        .getByRole('row')
        .nth(1)
      expect(await attempt.getByRole('cell').nth(2).textContent()).toBe('200')
      await scan('webhook-deliveries')

      await page.getByRole('button', { name: 'Resend' }).click()
      await expect.poll(() => receiver.requests.length).toBe(2)
      // A resend is a new delivery of the same event: the receiver can deduplicate on event_id.
      expect(JSON.parse(receiver.requests[1].body).event_id).toBe(sent.event_id)
      await expect
        .poll(async () => {
          await page.getByRole('button', { name: 'Show deliveries' }).click()
          return page.getByTestId('delivery-status').allTextContents()
        })
        .toEqual(['success', 'success'])
      await page.getByText('2 deliveries in the window, newest first, page 1').waitFor()
      // The log filtered by the service: by status, then by event type.
      await page.getByLabel('Status', { exact: true }).selectOption('failed')
      await page.getByRole('button', { name: 'Show deliveries' }).click()
      await page.getByText('0 deliveries in the window matching the filters, newest first, page 1').waitFor()
      await page.getByLabel('Status', { exact: true }).selectOption('success')
      await page.getByLabel('Event type', { exact: true }).selectOption('webhook.test')
      await page.getByRole('button', { name: 'Show deliveries' }).click()
      await page.getByText('2 deliveries in the window matching the filters, newest first, page 1').waitFor()
      expect(await page.getByTestId('delivery-status').allTextContents()).toEqual(['success', 'success'])
      await page.getByLabel('Event type', { exact: true }).selectOption('demo.scan.success')
      await page.getByRole('button', { name: 'Show deliveries' }).click()
      await page.getByText('0 deliveries in the window matching the filters, newest first, page 1').waitFor()
      await scan('webhook-deliveries-filtered')
      await page.getByLabel('Status', { exact: true }).selectOption('')
      await page.getByLabel('Event type', { exact: true }).selectOption('')

      await page.getByRole('button', { name: 'Send failed deliveries again' }).click()
      await page.getByText('0 failed deliveries sent again.').waitFor()

      await page.getByRole('link', { name: '← Webhooks' }).click()
      await page.getByRole('button', { name: 'Delete…' }).click()
      await page.getByRole('button', { name: `Delete ${receiver.url} and its deliveries` }).click()
      await page.getByText('No endpoint yet').waitFor()
      expect(receiver.requests).toHaveLength(2)
    },
    STEP_MS,
  )

  it(
    'creates members and searches them on the service by name prefix and by id',
    async () => {
      await page.getByRole('link', { name: 'Members' }).click()
      for (const name of ['Ada Lovelace', 'Grace Hopper']) {
        await page.getByLabel('Display name').fill(name)
        await page.getByRole('button', { name: 'Create member' }).click()
        await page.getByRole('cell', { name }).waitFor()
      }
      await scan('members')
      const names = () =>
        page
          .getByRole('table', { name: /^Members/ })
          .getByRole('row')
          .filter({ hasNot: page.getByRole('columnheader') })
          .allTextContents()
      const search = page.getByLabel('Name begins with, or member id')
      await search.fill('gra')
      await search.press('Enter')
      await page.getByRole('table', { name: 'Members whose name begins with “gra” (or whose id it is), in name order, page 1' }).waitFor()
      await expect.poll(names).toEqual([expect.stringContaining('Grace Hopper')])
      const graceId = (await page.getByRole('row').filter({ hasText: 'Grace Hopper' }).getByRole('code').textContent()) ?? ''
      expect(graceId).toMatch(/^[0-9a-f-]{36}$/)
      await search.fill(graceId)
      await page.getByRole('button', { name: 'Search' }).click()
      await expect.poll(names).toEqual([expect.stringContaining('Grace Hopper')])
      await search.fill('nobody')
      await page.getByRole('button', { name: 'Search' }).click()
      await expect.poll(names).toEqual([])
      await scan('members-search')
      await page.getByRole('button', { name: 'Show all' }).click()
      await expect.poll(names).toHaveLength(2)
    },
    STEP_MS,
  )

  it(
    'enrolls a synthetic person in the playground, then identifies them (Found) and a stranger (NotFound)',
    async () => {
      await page.getByRole('link', { name: 'Identify playground' }).click()
      await page.getByRole('button', { name: 'Create a playground key' }).click()
      await expect.poll(() => page.getByLabel('API key').inputValue()).toMatch(/^[0-9a-f-]{36}\.[\w-]{43}$/)
      await page.getByLabel('Synthetic person (seed 7)').fill('3')
      await page.getByLabel('Member').selectOption({ label: 'Ada Lovelace' })
      await page.getByRole('button', { name: 'Enroll both hands' }).click()
      await page.getByText('Synthetic person 3 enrolled as Ada Lovelace').waitFor()
      await page.getByRole('button', { name: 'Identify' }).click()
      await expect.poll(() => page.getByTestId('identify-status').textContent()).toBe('Found')
      expect(await page.getByTestId('identify-member').textContent()).toBe('Ada Lovelace')
      expect(Number(await page.getByTestId('identify-score').textContent())).toBeGreaterThanOrEqual(0.8)
      await scan('playground-found')
      await page.getByLabel('Synthetic person (seed 7)').fill('4')
      await page.getByRole('button', { name: 'Identify' }).click()
      await expect.poll(() => page.getByTestId('identify-status').textContent()).toBe('NotFound')
      expect(await page.getByTestId('identify-member').textContent()).toBe('—')
      expect(Number(await page.getByTestId('identify-score').textContent())).toBeLessThan(0.8)
      await scan('playground-notfound')
    },
    STEP_MS,
  )

  it(
    'erases the member after a confirmation',
    async () => {
      await page.getByRole('link', { name: 'Members' }).click()
      await page.getByRole('row').filter({ hasText: 'Ada Lovelace' }).getByRole('button', { name: 'Erase…' }).click()
      await page.getByRole('button', { name: 'Erase Ada Lovelace and their palms' }).click()
      await expect.poll(() => page.getByRole('cell', { name: 'Ada Lovelace' }).count()).toBe(0)
    },
    STEP_MS,
  )

  it(
    'links a registered terminal to a sandbox project, and follows an enrollment session on it live: pending, in progress, completed; then cancels one and disables the terminal',
    async () => {
      await page.getByRole('link', { name: '← Organization' }).click()
      await page.getByLabel('Project name').fill('Kiosk')
      await page.getByRole('button', { name: 'Create project' }).click()
      await page.getByRole('link', { name: 'Kiosk' }).click()
      const projectId = /\/projects\/([\w-]+)\//.exec(page.url())![1]
      // A sandbox project allows 5 requests a minute; this person clicks more (as test/support/terminals.ts lifts it for the HTTP suites).
      await liftRateLimits(svc, projectId)
      const terminal = await registerTerminal(svc)

      await page.getByRole('link', { name: 'Devices' }).click()
      await page.getByText('No terminal linked to this project yet.').waitFor()
      await page.getByLabel('Registration code').fill(terminal.registration_code)
      await page.getByLabel('Device name').fill('Front desk')
      await page.getByLabel('Mode').selectOption('enrollment')
      await page.getByRole('button', { name: 'Link terminal' }).click()
      await page.getByRole('link', { name: 'Front desk' }).waitFor()
      await scan('devices')

      await page.getByRole('link', { name: 'Members' }).click()
      await page.getByLabel('Display name').fill('Grace Hopper')
      await page.getByRole('button', { name: 'Create member' }).click()
      await page.getByRole('cell', { name: 'Grace Hopper' }).waitFor()
      await page.getByRole('link', { name: 'Devices' }).click()
      await page.getByRole('link', { name: 'Front desk' }).click()
      await page.getByLabel('Member to enroll').selectOption({ label: 'Grace Hopper' })
      await page.getByRole('button', { name: 'Start enrollment' }).click()
      const state = page.getByTestId('session-state')
      await expect.poll(() => state.textContent()).toBe('pending')

      // The terminal picks the session up, then completes it with Grace's palms: the page follows without a click.
      const device = { auth: terminal.device_token }
      const picked = await svc.request('GET', '/v1/device-com/enrollment?wait=0', device)
      expect(picked.body.session.state).toBe('in_progress')
      // The page asks every 2 s (expect.poll gives up after 1 s by default).
      const live = { timeout: 10_000 }
      await expect.poll(() => state.textContent(), live).toBe('in_progress')
      const { left_hand, right_hand } = enrollBody(population({ identities: 2 }), 1, '')
      const completed = await svc.request('POST', `/v1/device-com/enrollment/${picked.body.session.enroll_id}/complete`, {
        ...device,
        body: { left_hand, right_hand, challenge: picked.body.session.challenge },
      })
      expect(completed.status, JSON.stringify(completed.body)).toBe(200)
      await expect.poll(() => state.textContent(), live).toBe('completed')
      expect(await page.getByText('Terminal echoed the challenge').locator('xpath=following-sibling::dd[1]').textContent()).toBe('yes')
      await scan('device-enrollment')

      await page.getByRole('button', { name: 'Start enrollment' }).click()
      await expect.poll(() => state.textContent()).toBe('pending')
      await page.getByRole('button', { name: 'Cancel session' }).click()
      await expect.poll(() => state.textContent()).toBe('cancelled')
      expect((await svc.request('GET', '/v1/device-com/enrollment?wait=0', device)).status).toBe(204)

      await page.getByRole('button', { name: 'Disable terminal' }).click()
      await expect.poll(() => page.getByTestId('device-state').textContent()).toBe('disabled')
      // A disabled terminal's token is refused at once.
      expect((await svc.request('GET', '/v1/device-com/enrollment?wait=0', device)).status).toBe(403)
    },
    STEP_MS,
  )

  it(
    'shows the audit trail verified, filters and exports it, and says so when the trail fails verification',
    async () => {
      await page.getByRole('link', { name: '← Organization' }).click()
      await page.getByRole('link', { name: 'Audit trail' }).click()
      await page.getByRole('heading', { name: 'Audit trail' }).waitFor()
      await expect.poll(() => page.getByTestId('audit-verify').textContent()).toMatch(/^Verified\./)
      const orgId = /#\/orgs\/([\w-]+)\/audit$/.exec(page.url())![1]
      expect(await page.getByTestId('audit-action').allTextContents()).toContain('DELETE /v1/projects/{project_id}/members/{member_id}')

      // The webhook endpoint created earlier, by the signed-in admin, and nothing else of that action.
      await page.getByLabel('Project').selectOption({ label: 'Shop' })
      await page.getByLabel('Action', { exact: true }).fill('POST /v1/projects/{project_id}/webhooks')
      await page.getByRole('button', { name: 'Show records' }).click()
      await expect.poll(() => page.getByTestId('audit-action').allTextContents()).toEqual(['POST /v1/projects/{project_id}/webhooks'])
      await page.getByRole('cell', { name: 'token: admin@example.com' }).waitFor()
      await scan('audit')

      // The export of the same selection, saved from the page (the bearer token cannot ride a plain link).
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export NDJSON' }).click()])
      expect(download.suggestedFilename()).toMatch(new RegExp(`^audit-${orgId}-\\d{4}-\\d{2}-\\d{2}-\\d{4}-\\d{2}-\\d{2}\\.ndjson$`))
      const exported = fs
        .readFileSync(await download.path(), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
      expect(exported).toHaveLength(1)
      expect(exported[0]).toMatchObject({
        org_id: orgId,
        actor_kind: 'token',
        actor_id: 'admin@example.com',
        action: 'POST /v1/projects/{project_id}/webhooks',
        status: 201,
      })

      // A forged retention anchor: the service refuses to vouch for the trail, and the page says so instead of listing.
      await svc.service.app.sql`INSERT INTO audit_anchors (chain, hash, last_seq, purged_at) VALUES (${orgId}, ${randomBytes(32)}, 1, now())`
      await page.getByRole('button', { name: 'Show records' }).click()
      await expect
        .poll(() => page.getByTestId('audit-verify').textContent())
        .toMatch(/^The audit trail fails verification\. record 1 .*anchor is not authenticated/)
      expect(await page.getByTestId('audit-action').count()).toBe(0)
      await scan('audit-broken')
      // The one console error is Chromium's line for that 500.
      expect(chromium.errors.splice(0)).toEqual([expect.stringMatching(/status of 500 .*\/audit-log\?/)])
      await svc.service.app.sql`DELETE FROM audit_anchors WHERE chain = ${orgId}`
      await page.getByRole('button', { name: 'Show records' }).click()
      await expect.poll(() => page.getByTestId('audit-verify').textContent()).toMatch(/^Verified\./)
    },
    STEP_MS,
  )

  it(
    'signs out, and says the session ended when it expires under an open page',
    async () => {
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { name: 'You are signed out' }).waitFor()
      expect(await context.cookies()).toEqual([])

      // A second sign-in whose session then ends on the server in SESSION_LEFT_SECONDS. After a reload
      // the page holds a token for what is left and renews it until the server refuses: real time,
      // not a faked page clock (one left a page stuck under CI load: Preact's effects wait on its timers).
      await page.goto(await signInLink('admin@example.com'))
      await page.getByRole('heading', { name: 'Organizations' }).waitFor()
      const shortened = Date.now()
      await svc.service.app.sql`UPDATE console_sessions SET expires_at = now() + make_interval(secs => ${SESSION_LEFT_SECONDS}) WHERE ended_at IS NULL`
      await page.reload()
      await page.getByRole('heading', { name: 'Organizations' }).waitFor()
      await page.getByRole('heading', { name: 'Your session ended' }).waitFor({ timeout: (SESSION_LEFT_SECONDS + 30) * 1000 })
      expect(Date.now() - shortened).toBeGreaterThanOrEqual((SESSION_LEFT_SECONDS - 1) * 1000)
      await scan('session-ended')
      expect(chromium.errors).toEqual([])
    },
    STEP_MS + SESSION_LEFT_SECONDS * 1000,
  )
})
