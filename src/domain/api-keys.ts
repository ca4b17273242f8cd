// API keys: `{key_id}.{secret}` where key_id is the key's UUID and the secret 32 random bytes in
// base64url. Only the secret's SHA-256 is stored; the plaintext is returned once, at creation.
import type { AppContext } from '../app-context.js'
import { hashSecret, newSecret } from '../auth/secrets.js'
import { ServiceError } from '../errors.js'
import { newId, timestamp } from '../ids.js'
import { Nullable, Type } from '../http/schema.js'
import { insertApiKey, projectIdsInOrganization, type ApiKeyRow } from '../store/api-keys.js'

export const PREFIX_LENGTH = 8

const uuid = (description?: string) => Type.String({ format: 'uuid', description })
const time = (description: string) => Nullable(Type.String({ format: 'date-time', description }))

export const ApiKeyRecordSchema = Type.Object({
  id: uuid('the key id (the part before the dot of the plaintext key)'),
  prefix: Type.String({ description: 'the first 8 characters of the secret, to recognise a key' }),
  organization_id: uuid(),
  name: Type.String(),
  created_by_user_id: Type.String({ description: 'identity-token subject of the admin who created the key' }),
  project_ids: Nullable(Type.Array(uuid(), { description: 'projects the key may reach; null = organization-wide' })),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: time('last successful authentication, updated at most once a minute; null if never used'),
  revoked_at: time('when the key was revoked; null while it is active'),
}, { $id: 'ApiKeyRecord' })

export const ApiKeyCreatedSchema = Type.Object({
  id: uuid(),
  prefix: Type.String(),
  name: Type.String(),
  key: Type.String({ description: 'the plaintext key `{key_id}.{api_key}`; shown only in this response' }),
  project_ids: Nullable(Type.Array(uuid())),
  created_at: Type.String({ format: 'date-time' }),
}, { $id: 'ApiKeyCreated' })

export const KeyName = Type.String({ minLength: 1, maxLength: 200 })

export const apiKeyRecord = (row: ApiKeyRow) => ({
  id: row.id,
  prefix: row.prefix,
  organization_id: row.org_id,
  name: row.name,
  created_by_user_id: row.created_by_user_id,
  project_ids: row.project_ids,
  created_at: timestamp(row.created_at),
  last_used_at: timestamp(row.last_used_at),
  revoked_at: timestamp(row.revoked_at),
})

export interface NewApiKey {
  orgId: string
  name: string
  /** null = organization-wide. */
  projectIds: string[] | null
  createdBy: string
}

/** Create a key; every project id must be a project of the organization (else 422 invalid_reference). */
export async function createApiKey(app: AppContext, input: NewApiKey) {
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
