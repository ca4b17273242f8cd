// Queries of the project aggregate (with the environment facts every access check needs).
import type { Sql } from './engine/database.js'
import type { PlanId } from '../plans.js'

export interface ProjectRow {
  id: string
  org_id: string
  environment_id: string | null
  name: string
  mcc: number | null
  icon_path: string | null
  payment_account_id: string | null
  phone_number: string | null
  website: string | null
  plan: PlanId
  headcount: number
  daily_request_limit: number
  requests_per_minute: number
  enable_server_lookup: boolean
  created_at: Date
  updated_at: Date
  /** Joined from the environment (null when the project has none). */
  environment_owner_org_id: string | null
  environment_owner_kind: 'platform' | 'customer' | null
  environment_enables_server_lookup: boolean | null
}

const projectColumns = (sql: Sql) => sql`
  p.*, e.owner_org_id AS environment_owner_org_id, o.kind AS environment_owner_kind,
  e.enables_server_lookup AS environment_enables_server_lookup`
const projectTables = (sql: Sql) => sql`
  FROM projects p
  LEFT JOIN environments e ON e.id = p.environment_id
  LEFT JOIN organizations o ON o.id = e.owner_org_id`

/** The project, plus whether `subject` administers its organization (one round trip). */
export async function projectById(sql: Sql, id: string, subject: string | null = null) {
  const [row] = await sql<(ProjectRow & { caller_is_admin: boolean })[]>`
    SELECT ${projectColumns(sql)},
      EXISTS (SELECT 1 FROM organization_admins a WHERE a.org_id = p.org_id AND a.subject = ${subject ?? ''}) AS caller_is_admin
    ${projectTables(sql)} WHERE p.id = ${id}`
  return row ?? null
}

export interface ApiKeyFacts {
  org_id: string
  secret_hash: Buffer
  project_ids: string[] | null
  revoked_at: Date | null
  last_used_at: Date | null
}

/**
 * An API key and, in the same round trip, the project the request names (null when it does not
 * exist): authentication and the project's access check then cost one query together.
 */
export async function apiKeyWithProject(sql: Sql, keyId: string, projectId: string | null) {
  const [row] = await sql<
    (ProjectRow & {
      key_org_id: string
      key_secret_hash: Buffer
      key_project_ids: string[] | null
      key_revoked_at: Date | null
      key_last_used_at: Date | null
    })[]
  >`
    SELECT k.org_id AS key_org_id, k.secret_hash AS key_secret_hash, k.project_ids AS key_project_ids,
      k.revoked_at AS key_revoked_at, k.last_used_at AS key_last_used_at, pr.*
    FROM api_keys k
    LEFT JOIN LATERAL (SELECT ${projectColumns(sql)} ${projectTables(sql)} WHERE p.id = ${projectId}) pr ON true
    WHERE k.id = ${keyId}`
  if (!row) return null
  const { key_org_id, key_secret_hash, key_project_ids, key_revoked_at, key_last_used_at, ...project } = row
  const key: ApiKeyFacts = {
    org_id: key_org_id,
    secret_hash: key_secret_hash,
    project_ids: key_project_ids,
    revoked_at: key_revoked_at,
    last_used_at: key_last_used_at,
  }
  return { key, project: project.id ? (project as ProjectRow) : null }
}

export interface DeviceTokenFacts {
  token_hash: Buffer
  project_id: string | null
  enabled: boolean
  mode: string
  last_auth_at: Date | null
}

/**
 * The device a device token names and, in the same round trip, its project (null when the device
 * is not linked to one yet): a terminal's authentication and its project then cost one query.
 */
export async function deviceWithProject(sql: Sql, deviceId: string) {
  const [row] = await sql<
    (ProjectRow & {
      device_token_hash: Buffer
      device_project_id: string | null
      device_enabled: boolean
      device_mode: string
      device_last_auth_at: Date | null
    })[]
  >`
    SELECT d.token_hash AS device_token_hash, d.project_id AS device_project_id, d.enabled AS device_enabled,
      d.mode AS device_mode, d.last_auth_at AS device_last_auth_at, pr.*
    FROM devices d
    LEFT JOIN LATERAL (SELECT ${projectColumns(sql)} ${projectTables(sql)} WHERE p.id = d.project_id) pr ON true
    WHERE d.id = ${deviceId}`
  if (!row) return null
  const { device_token_hash, device_project_id, device_enabled, device_mode, device_last_auth_at, ...project } = row
  const device: DeviceTokenFacts = {
    token_hash: device_token_hash,
    project_id: device_project_id,
    enabled: device_enabled,
    mode: device_mode,
    last_auth_at: device_last_auth_at,
  }
  return { device, project: project.id ? (project as ProjectRow) : null }
}

export function projectsAdministeredBy(sql: Sql, subject: string) {
  return sql<ProjectRow[]>`
    SELECT ${projectColumns(sql)} ${projectTables(sql)}
    WHERE p.org_id IN (SELECT org_id FROM organization_admins WHERE subject = ${subject})
    ORDER BY p.created_at, p.id`
}

export function projectsReachableByKey(sql: Sql, orgId: string, projectIds: string[] | null) {
  return projectIds === null
    ? sql<ProjectRow[]>`SELECT ${projectColumns(sql)} ${projectTables(sql)} WHERE p.org_id = ${orgId} ORDER BY p.created_at, p.id`
    : sql<
        ProjectRow[]
      >`SELECT ${projectColumns(sql)} ${projectTables(sql)} WHERE p.org_id = ${orgId} AND p.id = ANY(${projectIds}::uuid[]) ORDER BY p.created_at, p.id`
}

export function projectsOfOrganization(sql: Sql, orgId: string) {
  return sql<ProjectRow[]>`SELECT ${projectColumns(sql)} ${projectTables(sql)} WHERE p.org_id = ${orgId} ORDER BY p.created_at, p.id`
}

export async function insertProject(
  sql: Sql,
  project: Omit<
    ProjectRow,
    'created_at' | 'updated_at' | 'environment_owner_org_id' | 'environment_owner_kind' | 'environment_enables_server_lookup' | 'enable_server_lookup'
  >,
) {
  await sql`INSERT INTO projects ${sql(project as never)}`
  return (await projectById(sql, project.id))!
}

export async function setServerLookup(sql: Sql, id: string, enabled: boolean) {
  await sql`UPDATE projects SET enable_server_lookup = ${enabled}, updated_at = now() WHERE id = ${id}`
}

/** The descriptive fields and the plan (with the limits it implies) an admin may change. */
export type ProjectChanges = Partial<
  Pick<
    ProjectRow,
    'name' | 'mcc' | 'icon_path' | 'payment_account_id' | 'phone_number' | 'website' | 'plan' | 'headcount' | 'daily_request_limit' | 'requests_per_minute'
  >
>

/** Applies the changes to the organization's project; null when it has no such project. */
export async function updateProjectOfOrganization(sql: Sql, orgId: string, id: string, changes: ProjectChanges) {
  const updated = await sql`
    UPDATE projects SET ${sql(changes as never, Object.keys(changes) as never)}, updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId} RETURNING id`
  return updated.length ? (await projectById(sql, id))! : null
}
