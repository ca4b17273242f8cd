// Queries of organizations, their admins and their environments.
import type { Queryable, Sql } from './engine/database.js'

export interface OrganizationRow {
  id: string
  name: string
  kind: 'platform' | 'customer'
  created_at: Date
}

export interface EnvironmentRow {
  id: string
  owner_org_id: string
  name: string
  dimension: number
  extractor_id: number
  extractor_version: number
  match_threshold: number
  margin: number
  min_quality: number
  enables_server_lookup: boolean
  /** How identify searches the gallery: every row, or a sign-bit scan keeping `candidates` rows per probe. */
  search_mode: 'exact' | 'two_stage' | 'auto'
  candidates: number
  /** Set: match_threshold is derived from this target FPIR by calibration (domain/accuracy/calibrator.ts). */
  target_fpir: number | null
  /** The lowest threshold calibration may set. */
  min_match_threshold: number
  /** Cluster mode: the environment's members are spread over this many shards (src/domain/galleries/shard-of.ts). */
  shards: number
  wrapped_key: Buffer
  created_at: Date
  /** Joined: the owner's kind decides the environment's kind. */
  owner_kind: 'platform' | 'customer'
}

export async function insertOrganization(sql: Sql, org: { id: string; name: string; kind: 'platform' | 'customer' }, adminSubject: string) {
  return sql.begin(async (tx) => {
    const [row] = await tx<OrganizationRow[]>`INSERT INTO organizations ${tx(org)} RETURNING *`
    await tx`INSERT INTO organization_admins (org_id, subject) VALUES (${org.id}, ${adminSubject})`
    return row
  })
}

export function organizationsAdministeredBy(sql: Sql, subject: string) {
  return sql<OrganizationRow[]>`
    SELECT o.* FROM organizations o JOIN organization_admins a ON a.org_id = o.id
    WHERE a.subject = ${subject} ORDER BY o.created_at, o.id`
}

export async function administersAny(sql: Sql, subject: string): Promise<boolean> {
  const [row] = await sql`SELECT 1 FROM organization_admins WHERE subject = ${subject} LIMIT 1`
  return Boolean(row)
}

/** Does the subject administer a platform organization (a platform operator)? */
export async function administersPlatform(sql: Sql, subject: string): Promise<boolean> {
  const [row] = await sql`
    SELECT 1 FROM organization_admins a JOIN organizations o ON o.id = a.org_id
    WHERE a.subject = ${subject} AND o.kind = 'platform' LIMIT 1`
  return Boolean(row)
}

export async function isOrganizationAdmin(sql: Sql, orgId: string, subject: string): Promise<boolean> {
  const [row] = await sql`SELECT 1 FROM organization_admins WHERE org_id = ${orgId} AND subject = ${subject}`
  return Boolean(row)
}

const environmentColumns = (sql: Queryable) => sql`e.*, o.kind AS owner_kind FROM environments e JOIN organizations o ON o.id = e.owner_org_id`

export async function insertEnvironment(sql: Sql, environment: Omit<EnvironmentRow, 'created_at' | 'owner_kind'>) {
  await sql`INSERT INTO environments ${sql(environment as never)}`
  return (await environmentById(sql, environment.id))!
}

export type EnvironmentChanges = Partial<
  Pick<
    EnvironmentRow,
    'name' | 'match_threshold' | 'margin' | 'min_quality' | 'enables_server_lookup' | 'search_mode' | 'candidates' | 'target_fpir' | 'min_match_threshold'
  >
>

/**
 * Applies the changes to the organization's environment; null when it has none such. Back to a
 * fixed threshold (target_fpir null), the environment's calibration record goes.
 */
export async function updateEnvironmentOfOrganization(sql: Sql, orgId: string, id: string, changes: EnvironmentChanges) {
  const updated = await sql.begin(async (tx) => {
    const rows =
      await tx`UPDATE environments SET ${tx(changes as never, Object.keys(changes) as never)} WHERE id = ${id} AND owner_org_id = ${orgId} RETURNING id`
    if (rows.length && changes.target_fpir === null) await tx`DELETE FROM environment_calibrations WHERE environment_id = ${id}`
    // A floor raised above the derived threshold holds from this commit, not from the next calibration.
    if (rows.length)
      await tx`UPDATE environments SET match_threshold = min_match_threshold WHERE id = ${id} AND target_fpir IS NOT NULL AND match_threshold < min_match_threshold`
    return rows.length > 0
  })
  return updated ? (await environmentById(sql, id))! : null
}

export async function environmentById(sql: Queryable, id: string) {
  const [row] = await sql<EnvironmentRow[]>`SELECT ${environmentColumns(sql)} WHERE e.id = ${id}`
  return row ?? null
}

export function environmentsOwnedBy(sql: Sql, orgId: string) {
  return sql<EnvironmentRow[]>`SELECT ${environmentColumns(sql)} WHERE e.owner_org_id = ${orgId} ORDER BY e.created_at, e.id`
}

export function allEnvironments(sql: Sql) {
  return sql<EnvironmentRow[]>`SELECT ${environmentColumns(sql)} ORDER BY e.created_at, e.id`
}
