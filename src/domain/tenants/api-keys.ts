// API keys: `{key_id}.{secret}` where key_id is the key's UUID and the secret 32 random bytes in
// base64url. Only the secret's SHA-256 is stored; the plaintext is returned once, at creation.
import type { DomainResources } from '../resources.js'
import { hashSecret, newSecret } from '../../auth/secrets.js'
import { ServiceError, notFound } from '../../errors.js'
import { newId, timestamp } from '../../ids.js'
import type { Sql } from '../../store/engine/database.js'
import { apiKeysOfOrganization, apiKeysReachingProject, insertApiKey, projectIdsInOrganization, revokeApiKey } from '../../store/api-keys.js'
import type { ProjectRow } from '../../store/projects.js'

export const PREFIX_LENGTH = 8

export interface NewApiKey {
  orgId: string
  name: string
  /** null = organization-wide. */
  projectIds: string[] | null
  createdBy: string
}

/** Create a key; every project id must be a project of the organization (else 422 invalid_reference). */
export async function createApiKey(app: Pick<DomainResources, 'sql'>, input: NewApiKey) {
  if (input.projectIds) {
    const known = await projectIdsInOrganization(app.sql, input.orgId, input.projectIds)
    const errors = input.projectIds
      .map((id, index) => ({ id, index }))
      .filter(({ id }) => !known.has(id))
      .map(({ index }) => ({ path: `/project_ids/${index}`, message: 'unknown project' }))
    if (errors.length) {
      throw new ServiceError('invalid_reference', `project_ids names ${errors.length} project(s) that do not exist in this organization`, { errors })
    }
  }
  const id = newId()
  const secret = newSecret()
  const row = await insertApiKey(app.sql, {
    id,
    org_id: input.orgId,
    name: input.name,
    prefix: secret.slice(0, PREFIX_LENGTH),
    secret_hash: hashSecret(secret),
    project_ids: input.projectIds,
    created_by_user_id: input.createdBy,
  })
  return {
    id: row.id,
    prefix: row.prefix,
    name: row.name,
    key: `${row.id}.${secret}`,
    project_ids: row.project_ids,
    created_at: timestamp(row.created_at),
  }
}

/** The organization's keys, organization-wide and project-scoped, revoked ones included. */
export function keysOfOrganization(sql: Sql, orgId: string) {
  return apiKeysOfOrganization(sql, orgId)
}

/** The keys that can reach the project: organization-wide ones and those scoped to it. */
export function keysReachingProject(sql: Sql, project: Pick<ProjectRow, 'id' | 'org_id'>) {
  return apiKeysReachingProject(sql, project.org_id, project.id)
}

/** Soft delete; revoking again keeps the first revocation time. A key of another organization is 404. */
export async function revokeKey(sql: Sql, orgId: string, keyId: string): Promise<void> {
  if (!(await revokeApiKey(sql, orgId, keyId))) throw notFound('API key')
}
