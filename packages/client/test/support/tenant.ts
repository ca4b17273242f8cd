// A tenant built through @palmvein/client, as a customer would: an organization, an environment
// (server lookup allowed), a sandbox project (the plan that may link terminals) with its rate
// limits lifted by the operator, and an organization API key.
import { createPalmveinClient, ok, type PalmveinClient } from '@palmvein/client'
import { liftRateLimits } from '../../../../test/support/terminals.js'
import type { TestService } from '../../../../test/support/service.js'

export interface ClientTenant {
  token: string
  /** The organization admin's client (identity token). */
  admin: PalmveinClient
  orgId: string
  environmentId: string
  projectId: string
  key: string
  /** The API key's client. */
  keyed: PalmveinClient
}

export async function createClientTenant(svc: TestService, subject: string): Promise<ClientTenant> {
  const token = await svc.token(subject)
  const admin = createPalmveinClient({ baseUrl: svc.url, credential: token })
  const org = await ok(admin.POST('/v1/organizations', { body: { name: `${subject} org` } }))
  const environment = await ok(
    admin.POST('/v1/organization/{org_id}/environments', {
      params: { path: { org_id: org.id } },
      body: { name: 'palms', enables_server_lookup: true },
    }),
  )
  const project = await ok(
    admin.POST('/v1/organization/{org_id}/projects', {
      params: { path: { org_id: org.id } },
      body: { name: 'front desk', environment_id: environment.id, plan: 'sandbox' },
    }),
  )
  // The operator's step (tests only): sandbox projects allow 5 requests a minute.
  await liftRateLimits(svc, project.id)
  const created = await ok(
    admin.POST('/v1/organization/{org_id}/api-keys', {
      params: { path: { org_id: org.id } },
      body: { name: 'tests', project_ids: null },
    }),
  )
  return {
    token,
    admin,
    orgId: org.id,
    environmentId: environment.id,
    projectId: project.id,
    key: created.key,
    keyed: createPalmveinClient({ baseUrl: svc.url, credential: created.key }),
  }
}
