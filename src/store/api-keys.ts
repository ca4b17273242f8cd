// Queries of the API key aggregate. The secret is never stored: only its SHA-256 (secret_hash).
import type { Sql } from './engine/database.js'

export interface ApiKeyRow {
  id: string
  org_id: string
  name: string
  prefix: string
  project_ids: string[] | null
  created_by_user_id: string
  created_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}

// Everything but secret_hash: the hash never leaves the authentication query.
const columns = (sql: Sql) => sql`id, org_id, name, prefix, project_ids, created_by_user_id, created_at, last_used_at, revoked_at`

export async function insertApiKey(sql: Sql, key: Omit<ApiKeyRow, 'created_at' | 'last_used_at' | 'revoked_at'> & { secret_hash: Buffer }) {
  const [row] = await sql<ApiKeyRow[]>`INSERT INTO api_keys ${sql(key as never)} RETURNING ${columns(sql)}`
  return row
}

/** Every key of the organization, revoked ones included (their record shows revoked_at). */
export function apiKeysOfOrganization(sql: Sql, orgId: string) {
  return sql<ApiKeyRow[]>`SELECT ${columns(sql)} FROM api_keys WHERE org_id = ${orgId} ORDER BY created_at, id`
}

/** Keys that can reach the project: the organization-wide ones and those scoped to it. */
export function apiKeysReachingProject(sql: Sql, orgId: string, projectId: string) {
  return sql<ApiKeyRow[]>`
    SELECT ${columns(sql)} FROM api_keys
    WHERE org_id = ${orgId} AND (project_ids IS NULL OR ${projectId}::uuid = ANY(project_ids))
    ORDER BY created_at, id`
}

/**
 * Revoke a key of the organization. Revoking an already revoked key keeps the first revocation
 * time. Null when the key does not exist in this organization.
 */
export async function revokeApiKey(sql: Sql, orgId: string, keyId: string) {
  const [row] = await sql<ApiKeyRow[]>`
    UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
    WHERE id = ${keyId} AND org_id = ${orgId}
    RETURNING ${columns(sql)}`
  return row ?? null
}

/** Which of these ids are projects of the organization (to refuse foreign or unknown ones). */
export async function projectIdsInOrganization(sql: Sql, orgId: string, projectIds: string[]) {
  const rows = await sql<{ id: string }[]>`SELECT id FROM projects WHERE org_id = ${orgId} AND id = ANY(${projectIds}::uuid[])`
  return new Set(rows.map((row) => row.id))
}

/** last_used_at = now, unless another process wrote it within the last minute. */
export async function touchApiKeyUsed(sql: Sql, keyId: string): Promise<void> {
  await sql`UPDATE api_keys SET last_used_at = now()
    WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`
}
