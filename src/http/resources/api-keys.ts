// API key records on the wire (spec "API keys"): never the secret, except once when created.
import { timestamp } from '../../ids.js'
import type { ApiKeyRow } from '../../store/api-keys.js'
import { Nullable, Text, Type } from '../schema.js'

const uuid = (description?: string) => Type.String({ format: 'uuid', description })

const time = (description: string) => Nullable(Type.String({ format: 'date-time', description }))

export const ApiKeyRecordSchema = Type.Object(
  {
    id: uuid('the key id (the part before the dot of the plaintext key)'),
    prefix: Type.String({ description: 'the first 8 characters of the secret, to recognise a key' }),
    organization_id: uuid(),
    name: Type.String(),
    created_by_user_id: Type.String({ description: 'identity-token subject of the admin who created the key' }),
    project_ids: Nullable(Type.Array(uuid(), { description: 'projects the key may reach; null = organization-wide' })),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: time('last successful authentication, updated at most once a minute; null if never used'),
    revoked_at: time('when the key was revoked; null while it is active'),
  },
  { $id: 'ApiKeyRecord' },
)

export const ApiKeyCreatedSchema = Type.Object(
  {
    id: uuid(),
    prefix: Type.String(),
    name: Type.String(),
    key: Type.String({ description: 'the plaintext key `{key_id}.{api_key}`; shown only in this response' }),
    project_ids: Nullable(Type.Array(uuid())),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'ApiKeyCreated' },
)

export const KeyName = Text({ minLength: 1, maxLength: 200 })

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
