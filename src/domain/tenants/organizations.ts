// Admin extensions: organizations, their environments and projects (token only, org admins only).
import type { DomainResources } from '../resources.js'
import { ServiceError } from '../../errors.js'
import { newId } from '../../ids.js'
import type { Sql } from '../../store/engine/database.js'
import {
  administersPlatform,
  environmentById,
  environmentsOwnedBy,
  insertEnvironment,
  insertOrganization,
  organizationsAdministeredBy,
  updateEnvironmentOfOrganization,
  type EnvironmentChanges,
} from '../../store/organizations.js'
import { insertProject, projectById, projectsOfOrganization, updateProjectOfOrganization, type ProjectChanges } from '../../store/projects.js'
import { PLANS, type PlanId } from '../../plans.js'

export type { EnvironmentChanges }

export function createOrganization(app: Pick<DomainResources, 'sql'>, input: { name: string; kind: 'platform' | 'customer' }, adminSubject: string) {
  return insertOrganization(app.sql, { id: newId(), name: input.name, kind: input.kind }, adminSubject)
}

export interface EnvironmentInput {
  name: string
  dimension?: 128 | 256 | 512
  extractor_id?: number
  extractor_version?: number
  match_threshold?: number
  margin?: number
  min_quality?: number
  enables_server_lookup?: boolean
  search_mode?: 'exact' | 'two_stage' | 'auto'
  candidates?: number
  /** Derive match_threshold from this FPIR by calibration; match_threshold serves until the first one. */
  target_fpir?: number | null
  min_match_threshold?: number
  shards?: number
}

export async function createEnvironment(app: Pick<DomainResources, 'keyring' | 'sql' | 'cluster'>, ownerOrgId: string, input: EnvironmentInput) {
  const id = newId()
  // During a master key rotation the key is wrapped under both master keys.
  await app.keyring.refreshMasterKeys(app.sql)
  const { wrapped } = app.keyring.newKey(undefined, `environment:${id}`)
  const environment = await insertEnvironment(app.sql, {
    id,
    owner_org_id: ownerOrgId,
    name: input.name,
    dimension: input.dimension ?? 256,
    extractor_id: input.extractor_id ?? 1,
    extractor_version: input.extractor_version ?? 1,
    match_threshold: input.match_threshold ?? 0.8,
    margin: input.margin ?? 0.03,
    min_quality: input.min_quality ?? 0,
    enables_server_lookup: input.enables_server_lookup ?? false,
    search_mode: input.search_mode ?? 'auto',
    candidates: input.candidates ?? 256,
    target_fpir: input.target_fpir ?? null,
    min_match_threshold: input.min_match_threshold ?? 0.5,
    shards: input.shards ?? 1,
    wrapped_key: wrapped,
  })
  // Cluster mode: served (by this node, at first) before the creation answers.
  await app.cluster?.environmentCreated(environment.id, environment.shards)
  return environment
}

/**
 * Changes an environment's settings; every service process on the database takes them up. While a
 * target FPIR derives the threshold, match_threshold cannot be set (409): set target_fpir to null
 * first, or with it.
 */
export async function updateEnvironment(
  app: Pick<DomainResources, 'sql' | 'galleries' | 'calibrator'>,
  orgId: string,
  environmentId: string,
  update: EnvironmentChanges,
) {
  const current = await environmentById(app.sql, environmentId)
  if (!current || current.owner_org_id !== orgId) throw new ServiceError('not_found', `organization ${orgId} has no environment ${environmentId}`)
  const targetAfter = update.target_fpir === undefined ? current.target_fpir : update.target_fpir
  if (update.match_threshold !== undefined && targetAfter !== null) {
    throw new ServiceError(
      'conflict',
      `environment ${environmentId} derives match_threshold from target_fpir ${targetAfter}; set target_fpir to null to fix the threshold`,
      {
        errors: [{ path: '/match_threshold', message: 'derived from target_fpir' }],
      },
    )
  }
  const environment = await updateEnvironmentOfOrganization(app.sql, orgId, environmentId, update)
  if (!environment) throw new ServiceError('not_found', `organization ${orgId} has no environment ${environmentId}`)
  await app.galleries.environmentChanged(environmentId)
  if (environment.target_fpir !== null) app.calibrator.kick()
  return environment
}

export interface ProjectInput {
  name: string
  environment_id?: string | null
  plan: PlanId
  mcc?: number | null
  phone_number?: string | null
  website?: string | null
  icon_path?: string | null
  payment_account_id?: string | null
}

/**
 * Who sets plans (DECISIONS.md "Tenancy and control"): a platform operator (an admin of a platform
 * organization, or the CLI) sets any plan; an organization admin creates projects on the
 * self-service plans only (PALMVEIN_SELF_SERVICE_PLANS) and cannot change a plan.
 */
export type PlanAuthority = 'operator' | 'organization-admin'

/** The authority of a token's subject over plans: an admin of any platform organization is an operator. */
export async function planAuthorityOf(sql: Sql, subject: string): Promise<PlanAuthority> {
  return (await administersPlatform(sql, subject)) ? 'operator' : 'organization-admin'
}

/** A project may use its own organization's environments or a global (platform) one. */
export async function createProject(app: Pick<DomainResources, 'config' | 'sql'>, orgId: string, input: ProjectInput, authority: PlanAuthority) {
  if (authority !== 'operator' && !app.config.selfServicePlans.includes(input.plan)) {
    throw new ServiceError(
      'forbidden',
      `the ${input.plan} plan is set by a platform operator; an organization admin creates projects on the ${app.config.selfServicePlans.join(' or ')} plan`,
      {
        errors: [{ path: '/plan', message: `one of ${app.config.selfServicePlans.join(', ')}` }],
      },
    )
  }
  if (input.environment_id) {
    const environment = await environmentById(app.sql, input.environment_id)
    if (!environment || (environment.owner_org_id !== orgId && environment.owner_kind !== 'platform')) {
      throw new ServiceError('invalid_reference', `environment ${input.environment_id} does not exist or belongs to another organization`, {
        errors: [{ path: '/environment_id', message: 'unknown environment' }],
      })
    }
  }
  const plan = PLANS[input.plan]
  return insertProject(app.sql, {
    id: newId(),
    org_id: orgId,
    environment_id: input.environment_id ?? null,
    name: input.name,
    mcc: input.mcc ?? null,
    icon_path: input.icon_path ?? null,
    payment_account_id: input.payment_account_id ?? null,
    phone_number: input.phone_number ?? null,
    website: input.website ?? null,
    plan: input.plan,
    headcount: plan.headcount,
    daily_request_limit: plan.dailyRequestLimit,
    requests_per_minute: plan.requestsPerMinute,
  })
}

/** The organizations an identity-token user administers. */
export function organizationsOf(sql: Sql, subject: string) {
  return organizationsAdministeredBy(sql, subject)
}

export function environmentsOf(sql: Sql, orgId: string) {
  return environmentsOwnedBy(sql, orgId)
}

export function projectsOf(sql: Sql, orgId: string) {
  return projectsOfOrganization(sql, orgId)
}

export type ProjectUpdate = Partial<Omit<ProjectInput, 'environment_id'>>

/**
 * Rename, redescribe or change the plan of one of the organization's projects. A new plan sets its
 * rate, daily limit and headcount at once; members above a lowered headcount stay, new ones wait.
 * The environment cannot change: the project's members and their palms live in it.
 */
export async function updateProject(app: Pick<DomainResources, 'sql'>, orgId: string, projectId: string, update: ProjectUpdate, authority: PlanAuthority) {
  const { plan, ...fields } = update
  const changes: ProjectChanges = { ...fields }
  if (plan && authority !== 'operator') {
    const current = await projectById(app.sql, projectId)
    // Sending the plan the project already has changes nothing, so it is no plan change.
    if (current && current.org_id === orgId && current.plan !== plan) {
      throw new ServiceError(
        'forbidden',
        `a project's plan is changed by a platform operator (an admin of a platform organization, or the CLI: palmvein project plan), not by an organization admin`,
        {
          errors: [{ path: '/plan', message: 'set by a platform operator' }],
        },
      )
    }
  }
  if (plan) {
    const limits = PLANS[plan]
    Object.assign(changes, { plan, headcount: limits.headcount, daily_request_limit: limits.dailyRequestLimit, requests_per_minute: limits.requestsPerMinute })
  }
  const project = await updateProjectOfOrganization(app.sql, orgId, projectId, changes)
  if (!project) throw new ServiceError('not_found', `organization ${orgId} has no project ${projectId}`)
  return project
}

/** The operator's plan change (the CLI's `palmvein project plan`): any project, any plan. */
export async function setProjectPlan(app: Pick<DomainResources, 'sql'>, projectId: string, plan: PlanId) {
  const project = await projectById(app.sql, projectId)
  if (!project) throw new ServiceError('not_found', `project ${projectId} does not exist`)
  return updateProject(app, project.org_id, projectId, { plan }, 'operator')
}
