// Projects on a plan an organization admin cannot choose (DECISIONS.md "Tenancy and control"): the
// admin creates the project on the self-service plan, then the platform operator sets its plan with
// the very function `palmvein project plan` runs.
import { setProjectPlan } from '../../src/domain/tenants/organizations.js'
import type { PlanId } from '../../src/plans.js'
import { expectStatus, type TestService } from './service.js'

/**
 * The operator's plan change, as the CLI makes it: through the service's own connection, or the
 * storage's when the service runs in another process.
 */
export async function operatorSetsPlan(svc: Pick<TestService, 'service' | 'storage'>, projectId: string, plan: PlanId): Promise<void> {
  await setProjectPlan({ sql: svc.service?.app.sql ?? svc.storage.db.sql }, projectId, plan)
}

/** POST /v1/organization/{org_id}/projects as the organization admin, then the operator's plan; answers the project as read back. */
export async function createProjectOnPlan(
  svc: TestService,
  token: string,
  orgId: string,
  body: { name: string; environment_id?: string | null; plan: PlanId } & Record<string, unknown>,
): Promise<any> {
  const created = await svc.request('POST', `/v1/organization/${orgId}/projects`, { auth: token, body: { ...body, plan: 'sandbox' } })
  expectStatus(created, 201)
  if (body.plan === 'sandbox') return created.body
  await operatorSetsPlan(svc, created.body.id, body.plan)
  const read = await svc.request('GET', `/v1/organization/${orgId}/projects`, { auth: token })
  return read.body.find((project: { id: string }) => project.id === created.body.id)
}
