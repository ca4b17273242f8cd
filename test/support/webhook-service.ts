// The setting of the webhook HTTP suites: a service whose delivery worker runs (loopback receivers
// allowed, 2 s timeout), two tenants, and receivers closed after each test. Registers its own
// hooks; the fields are set once beforeAll has run.
import { afterAll, afterEach, beforeAll } from 'vitest'
import { startReceiver, type Receiver } from '../webhooks/receivers.js'
import { createTenant, type Tenant } from './security.js'
import { bootService, type TestService } from './service.js'

export interface WebhookService {
  svc: TestService
  tenant: Tenant
  /** A second organization's tenant, for isolation checks. */
  other: Tenant
  /** `/v1/projects/{project}/webhooks{suffix}`, the tenant's project by default. */
  path(suffix?: string, projectId?: string): string
  /** A loopback receiver, closed after the test. */
  receiver(options?: Parameters<typeof startReceiver>[0]): Promise<Receiver>
}

export function useWebhookService(subject: string): WebhookService {
  const receivers: Receiver[] = []
  const fixture = {
    path: (suffix = '', projectId = fixture.tenant.projectId) => `/v1/projects/${projectId}/webhooks${suffix}`,
    async receiver(options) {
      const receiver = await startReceiver(options)
      receivers.push(receiver)
      return receiver
    },
  } as WebhookService
  beforeAll(async () => {
    fixture.svc = await bootService({ config: { webhookWorker: true, webhookAllowLocalhost: true, webhookTimeoutMs: 2000 } })
    fixture.tenant = await createTenant(fixture.svc, `${subject}@example.com`)
    fixture.other = await createTenant(fixture.svc, `${subject}-other@example.com`)
  })
  afterAll(async () => {
    await fixture.svc?.close()
  })
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
  })
  return fixture
}
