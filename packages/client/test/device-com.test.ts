// The terminal's side through @palmvein/client: registration, the long poll, completing a session
// (and the enrollment.completed webhook it sends, verified with verifyWebhook), and the simulated
// terminal doing all of it on its own, then identifying by server lookup.
import {
  captureFromVector,
  ok,
  PalmveinError,
  registerTerminal,
  runSimulatedTerminal,
  syntheticCapture,
  TerminalClient,
  verifyWebhook,
  WebhookVerificationError,
  type SimulatedTerminalEvent,
} from '@palmvein/client'
import { decodeTemplate } from '@palmvein/matcher'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { standardSignature } from '../../../src/webhooks/signer.js'
import { bootService, type TestService } from '../../../test/support/service.js'
import { startReceiver, type Receiver } from '../../../test/webhooks/receivers.js'
import { createClientTenant, type ClientTenant } from './support/tenant.js'

let svc: TestService
let tenant: ClientTenant
let receiver: Receiver
let secret: string
beforeAll(async () => {
  svc = await bootService({ config: { webhookWorker: true, webhookAllowLocalhost: true, webhookTimeoutMs: 2000 } })
  tenant = await createClientTenant(svc, 'terminal@example.com')
  receiver = await startReceiver()
  const webhook = await ok(
    tenant.keyed.POST('/v1/projects/{project_id}/webhooks', {
      params: { path: { project_id: tenant.projectId } },
      body: { url: `${receiver.url}/hook`, event_types: ['enrollment.completed'] },
    }),
  )
  secret = webhook.secret
}, 120_000)
afterAll(async () => {
  await receiver?.close()
  await svc?.close()
})

async function newMember(name: string): Promise<string> {
  const member = await ok(
    tenant.keyed.POST('/v1/projects/{project_id}/members', { params: { path: { project_id: tenant.projectId } }, body: { display_name: name } }),
  )
  return member.member_id
}

function startSession(deviceId: string, memberId: string) {
  return ok(tenant.keyed.POST('/v1/devices/{device_id}/enroll/member/start', { params: { path: { device_id: deviceId } }, body: { member_id: memberId } }))
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('Device-Com through TerminalClient', () => {
  it('registers, is refused until linked, long-polls a session started meanwhile, completes it; the webhook verifies', async () => {
    const registration = await registerTerminal({ baseUrl: svc.url, mode: 'enrollment', hardwarePlatform: 'test' })
    expect(registration.registrationCode).toHaveLength(8)
    expect(registration.deviceToken).toMatch(/^pvd_/)
    const terminal = new TerminalClient({ baseUrl: svc.url, deviceToken: registration.deviceToken })
    const unlinked = await terminal.pollEnrollment({ waitSeconds: 0 }).catch((error: unknown) => error)
    expect(unlinked).toBeInstanceOf(PalmveinError)
    expect(unlinked).toMatchObject({ status: 403, code: 'forbidden' })

    await ok(
      tenant.admin.POST('/v1/projects/{project_id}/device/android/complete_registration', {
        params: { path: { project_id: tenant.projectId } },
        body: { registration_code: registration.registrationCode, device_name: 'desk', device_mode: 'enrollment' },
      }),
    )
    expect(await terminal.pollEnrollment({ waitSeconds: 0 })).toBeNull()

    const memberId = await newMember('Grace Hopper')
    // The poll is waiting when the session starts: it answers with it, picked up.
    const polled = terminal.pollEnrollment({ waitSeconds: 20 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const started = await startSession(registration.deviceId, memberId)
    const session = await polled
    expect(session).toMatchObject({ enroll_id: started.session.enroll_id, state: 'in_progress', user_id: memberId })

    // An extractor's feature vector (here: a synthetic palm's, decoded), encoded by captureFromVector.
    const fromVector = (attempt: number) => {
      const template = decodeTemplate(Buffer.from(syntheticCapture({ identity: 11, hand: 'left', attempt }), 'base64url'))
      return captureFromVector(Array.from(template.vector), { hand: template.hand, quality: template.quality, extractorId: template.extractorId })
    }
    expect(fromVector(0)).toBe(syntheticCapture({ identity: 11, hand: 'left' }))
    const completed = await terminal.completeEnrollment(session!, { left_hand: { enroll_capture: fromVector(0), identify_capture: fromVector(1) } })
    expect(completed.member_id).toBe(memberId)
    expect(completed.session).toMatchObject({ state: 'completed', terminal_challenge_response: true })
    // The session is over: completing it again is a 409.
    const again = await terminal
      .completeEnrollment(session!, { left_hand: { enroll_capture: fromVector(0), identify_capture: fromVector(1) } })
      .catch((error: unknown) => error)
    expect(again).toMatchObject({ status: 409, code: 'conflict' })

    const delivery = await waitFor('the enrollment.completed delivery', () =>
      receiver.requests.find((request) => request.body.includes(started.session.enroll_id)),
    )
    const event = verifyWebhook({ secret, body: delivery.body, headers: delivery.headers })
    expect(event).toMatchObject({
      event_type: 'enrollment.completed',
      project_id: tenant.projectId,
      data: { member_id: memberId, session_id: started.session.enroll_id },
    })

    const reason = (options: Partial<Parameters<typeof verifyWebhook>[0]>) => {
      try {
        verifyWebhook({ secret, body: delivery.body, headers: delivery.headers, ...options })
        return 'accepted'
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError)
        return (error as WebhookVerificationError).reason
      }
    }
    expect(reason({ body: delivery.body.replace(memberId, '00000000-0000-4000-8000-000000000000') })).toBe('bad_signature')
    expect(reason({ secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64') })).toBe('bad_signature')
    // Only the spec's header tampered: the Standard Webhooks signature alone does not let it through.
    expect(reason({ headers: { ...delivery.headers, 'x-webhook-signature': 'sha256=' + '0'.repeat(64) } })).toBe('bad_signature')
    expect(reason({ headers: { ...delivery.headers, 'webhook-signature': undefined } })).toBe('missing_header')
    const sentAt = Number(delivery.headers['webhook-timestamp']) * 1000
    expect(reason({ now: new Date(sentAt + 301_000) })).toBe('timestamp_out_of_tolerance')
    expect(reason({ now: new Date(sentAt - 301_000) })).toBe('timestamp_out_of_tolerance')
    expect(reason({ now: new Date(sentAt + 299_000) })).toBe('accepted')
    // A recorded delivery signed again (the service's signer) with a timestamp ten minutes old.
    const old = Math.floor(Date.now() / 1000) - 600
    const replayed = {
      ...delivery.headers,
      'webhook-timestamp': String(old),
      'webhook-signature': standardSignature(secret, String(delivery.headers['webhook-id']), old, delivery.body),
    }
    expect(reason({ headers: replayed })).toBe('timestamp_out_of_tolerance')
    expect(reason({ headers: replayed, toleranceSeconds: 700 })).toBe('accepted')
  })
})

describe('runSimulatedTerminal', () => {
  it('waits to be linked with its code, completes a session with a synthetic palm, and identifies that palm later', async () => {
    const events: SimulatedTerminalEvent[] = []
    const terminal = await runSimulatedTerminal({
      baseUrl: svc.url,
      pollWaitSeconds: 5,
      retryDelayMs: 100,
      palmOf: () => ({ identity: 5, hand: 'right' }),
      onEvent: (event) => events.push(event),
    })
    try {
      expect(events).toEqual([{ type: 'registered', deviceId: terminal.deviceId, registrationCode: terminal.registrationCode }])
      await ok(
        tenant.admin.POST('/v1/projects/{project_id}/device/android/complete_registration', {
          params: { path: { project_id: tenant.projectId } },
          body: { registration_code: terminal.registrationCode, device_name: 'kiosk', device_mode: 'enrollment' },
        }),
      )
      await waitFor('linked', () => events.find((event) => event.type === 'linked'))
      const memberId = await newMember('Katherine Johnson')
      const started = await startSession(terminal.deviceId, memberId)
      const enrolled = await waitFor('enrolled', () => events.find((event) => event.type === 'enrolled'))
      expect(enrolled).toMatchObject({ memberId, palm: { identity: 5, hand: 'right' }, session: { enroll_id: started.session.enroll_id, state: 'completed' } })
      expect(events.map((event) => event.type)).toEqual(['registered', 'linked', 'session', 'enrolled'])

      // Server lookup is off until the project turns it on.
      const disabled = await terminal.identify({ identity: 5, hand: 'right' }).catch((error: unknown) => error)
      expect(disabled).toMatchObject({ status: 403, code: 'server_lookup_disabled' })
      await ok(
        tenant.admin.PUT('/v1/projects/{project_id}/server-lookup', {
          params: { path: { project_id: tenant.projectId } },
          body: { enable_server_lookup: true },
        }),
      )
      expect(await terminal.identify({ identity: 5, hand: 'right' })).toMatchObject({ status: 'Found', member_id: memberId, hand: 'right' })
      expect(await terminal.identify({ identity: 6, hand: 'right' })).toMatchObject({ status: 'NotFound', member_id: null })
    } finally {
      await terminal.stop()
    }
    await expect(terminal.finished).resolves.toBeUndefined()
  })

  it('reports a session the service refuses (a palm of another member) and goes on with the next one', async () => {
    const [first, second, third] = [await newMember('Ada'), await newMember('Ada again'), await newMember('Mary')]
    // The second person shows the first one's palm: a duplicate.
    const palms: Record<string, { identity: number; hand: 'left' }> = {
      [first]: { identity: 21, hand: 'left' },
      [second]: { identity: 21, hand: 'left' },
      [third]: { identity: 22, hand: 'left' },
    }
    const events: SimulatedTerminalEvent[] = []
    const terminal = await runSimulatedTerminal({
      baseUrl: svc.url,
      link: { credential: tenant.token, projectId: tenant.projectId },
      pollWaitSeconds: 5,
      retryDelayMs: 100,
      palmOf: (userId) => palms[userId],
      onEvent: (event) => events.push(event),
    })
    try {
      for (const [memberId, outcome] of [
        [first, 'enrolled'],
        [second, 'refused'],
        [third, 'enrolled'],
      ] as const) {
        const started = await startSession(terminal.deviceId, memberId)
        const event = await waitFor(`${outcome} for ${memberId}`, () =>
          events.find((seen) => seen.type === outcome && seen.session.enroll_id === started.session.enroll_id),
        )
        if (event.type === 'refused') expect(event.error).toMatchObject({ status: 409, code: 'duplicate_palm' })
        if (event.type === 'enrolled') expect(event.memberId).toBe(memberId)
      }
      // The refused session was reported once, not retried while it stayed active.
      expect(events.filter((event) => event.type === 'refused')).toHaveLength(1)
    } finally {
      await terminal.stop()
    }
  })

  it('an abort signal ends the loop, even in the middle of a long poll', async () => {
    const controller = new AbortController()
    const terminal = await runSimulatedTerminal({
      baseUrl: svc.url,
      link: { credential: tenant.token, projectId: tenant.projectId },
      pollWaitSeconds: 30,
      signal: controller.signal,
    })
    await new Promise((resolve) => setTimeout(resolve, 500))
    const before = Date.now()
    controller.abort()
    await terminal.finished
    expect(Date.now() - before).toBeLessThan(5_000)
  })
})
