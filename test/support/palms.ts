// Fixtures of the biometrics tests: a tenant (organization, environment, enterprise project, API
// key) built through the API, members, and enroll/identify bodies made from the seeded synthetic
// population (low noise, no look-alikes, so mated and non-mated scores are far apart).
import { createSyntheticPopulation, DEMO_CAPTURES, encodeTemplate, type Hand, type SyntheticPopulation } from '@palmvein/matcher'
import { expectStatus, type TestService } from './service.js'
import { createProjectOnPlan } from './plans.js'

export interface PalmTenant {
  token: string
  orgId: string
  environmentId: string
  projectId: string
  /** Organization-wide API key. */
  key: string
}

export interface EnvironmentOptions {
  dimension?: 128 | 256 | 512
  extractor_id?: number
  extractor_version?: number
  match_threshold?: number
  search_mode?: 'exact' | 'two_stage' | 'auto'
  candidates?: number
  margin?: number
  min_quality?: number
  target_fpir?: number | null
  min_match_threshold?: number
  shards?: number
}

async function post(svc: TestService, token: string, path: string, body: unknown) {
  const response = await svc.request('POST', path, { auth: token, body })
  expectStatus(response, 201)
  return response.body
}

export async function createPalmTenant(svc: TestService, subject: string, environment: EnvironmentOptions = {}): Promise<PalmTenant> {
  const token = await svc.token(subject)
  const org = await post(svc, token, '/v1/organizations', { name: `${subject} org` })
  const env = await post(svc, token, `/v1/organization/${org.id}/environments`, { name: 'palms', ...environment })
  const project = await createProjectOnPlan(svc, token, org.id, { name: 'palms', environment_id: env.id, plan: 'enterprise' })
  const key = await post(svc, token, `/v1/organization/${org.id}/api-keys`, { name: 'palms', project_ids: null })
  return { token, orgId: org.id, environmentId: env.id, projectId: project.id, key: key.key }
}

/** Another enterprise project (and its own environment) of the tenant's organization. */
export async function addProject(
  svc: TestService,
  tenant: PalmTenant,
  environment: EnvironmentOptions = {},
): Promise<{ projectId: string; environmentId: string }> {
  const env = await post(svc, tenant.token, `/v1/organization/${tenant.orgId}/environments`, { name: 'more palms', ...environment })
  const project = await createProjectOnPlan(svc, tenant.token, tenant.orgId, { name: 'more', environment_id: env.id, plan: 'enterprise' })
  return { projectId: project.id, environmentId: env.id }
}

export async function createMember(svc: TestService, tenant: PalmTenant, displayName = 'Member', projectId = tenant.projectId): Promise<string> {
  const response = await svc.request('POST', `/v1/projects/${projectId}/members`, { auth: tenant.key, body: { display_name: displayName } })
  expectStatus(response, 201)
  return response.body.member_id
}

export function population(options: { seed?: number; dimension?: number; identities?: number; extractorId?: number } = {}): SyntheticPopulation {
  return createSyntheticPopulation({
    seed: options.seed ?? 7,
    dimension: options.dimension ?? 256,
    identities: options.identities ?? 64,
    ...DEMO_CAPTURES,
    extractorId: options.extractorId ?? 1,
  })
}

export const base64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url')

/** Session 0 captures (attempts 0 and 1) of both hands of `identity`. */
export function enrollBody(palms: SyntheticPopulation, identity: number, memberId: string, hands: Hand[] = ['left', 'right']) {
  const body: Record<string, unknown> = { member_id: memberId }
  for (const hand of hands) {
    body[`${hand}_hand`] = {
      enroll_capture: base64url(palms.template(identity, hand, 0, 0, { quality: 90 })),
      identify_capture: base64url(palms.template(identity, hand, 0, 1, { quality: 90 })),
      palm_position: { x: 1, y: 2, z: 60, pitch: 0, roll: 1.5, yaw: -2 },
    }
  }
  return body
}

/** A later capture (session 1 by default) of one hand, as the identify body. */
export function identifyBody(palms: SyntheticPopulation, identity: number, hand: Hand, session = 1, attempt = 0) {
  return { palm: { identify_capture: base64url(palms.template(identity, hand, session, attempt, { quality: 90 })) } }
}

/** An identify body from a raw float vector (tests that build geometry by hand); hand flagged when given. */
export function vectorBody(vector: Float32Array, extractorId = 1, hand: Hand | null = null) {
  return { palm: { identify_capture: base64url(encodeTemplate({ vector, extractorId, extractorVersion: 1, quality: 90, hand })) } }
}

export async function enroll(svc: TestService, tenant: PalmTenant, body: unknown, projectId = tenant.projectId) {
  return svc.request('POST', `/v1/projects/${projectId}/biometrics/enroll`, { auth: tenant.key, body })
}

export async function identify(svc: TestService, tenant: PalmTenant, body: unknown, query = '', projectId = tenant.projectId) {
  const response = await svc.request('POST', `/v1/projects/${projectId}/biometrics/identify${query}`, { auth: tenant.key, body })
  expectStatus(response, 200)
  return response.body as {
    status: string
    member_id: string | null
    match_score: number
    hand: string | null
    candidates?: Array<{ member_id: string; match_score: number; hand: string }>
  }
}

/** Waits until /healthz answers 200 (galleries loaded). */
export async function waitUntilReady(baseUrl: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    const response = await fetch(`${baseUrl}/healthz`)
    last = await response.text()
    if (response.status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`not ready after ${timeoutMs} ms: ${last}`)
}
