// Organizations, environments and the project input of the admin extension routes, on the wire.
import { timestamp } from '../../ids.js'
import { PLANS } from '../../plans.js'
import type { EnvironmentRow, OrganizationRow } from '../../store/organizations.js'
import { Nullable, Text, Type } from '../schema.js'

export const OrganizationSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: Type.Union([Type.Literal('platform'), Type.Literal('customer')]),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Organization' },
)

export const EnvironmentSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    owner_org_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: Type.Union([Type.Literal('global'), Type.Literal('organization')]),
    dimension: Type.Integer(),
    extractor_id: Type.Integer(),
    extractor_version: Type.Integer(),
    match_threshold: Type.Number(),
    margin: Type.Number(),
    min_quality: Type.Integer(),
    enables_server_lookup: Type.Boolean(),
    search_mode: Type.Union([Type.Literal('exact'), Type.Literal('two_stage'), Type.Literal('auto')]),
    candidates: Type.Integer(),
    target_fpir: Nullable(
      Type.Number({
        description: 'Set: match_threshold is derived by calibration so that the FPIR at the current gallery size is at most this (GET …/accuracy)',
      }),
    ),
    min_match_threshold: Type.Number({ description: 'The lowest threshold calibration may set' }),
    shards: Type.Integer({ description: 'Cluster mode: the members are spread over this many shards, each held by several nodes (docs/scale-out.md)' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Environment' },
)

export const organizationResource = (row: OrganizationRow) => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  created_at: timestamp(row.created_at),
})

export const environmentResource = (row: EnvironmentRow) => ({
  id: row.id,
  owner_org_id: row.owner_org_id,
  name: row.name,
  kind: row.owner_kind === 'platform' ? 'global' : 'organization',
  dimension: row.dimension,
  extractor_id: row.extractor_id,
  extractor_version: row.extractor_version,
  match_threshold: row.match_threshold,
  margin: row.margin,
  min_quality: row.min_quality,
  enables_server_lookup: row.enables_server_lookup,
  search_mode: row.search_mode,
  candidates: row.candidates,
  target_fpir: row.target_fpir,
  min_match_threshold: row.min_match_threshold,
  shards: row.shards,
  created_at: timestamp(row.created_at),
})

// What defines an environment's templates: fixed at creation.
export const EnvironmentFixedFields = {
  dimension: Type.Optional(Type.Union([Type.Literal(128), Type.Literal(256), Type.Literal(512)])),
  extractor_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  extractor_version: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  shards: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1024,
      description:
        'Admin extension. Cluster mode (PALMVEIN_NODE_URL): spread the members over this many shards, a member in shard hash(member_id) mod shards, each shard held by PALMVEIN_SHARD_REPLICAS nodes; without cluster mode every process holds the whole environment. Default 1',
    }),
  ),
}
// What may change later (PATCH), all optional there.
export const EnvironmentSettingsFields = {
  name: Text({ minLength: 1, maxLength: 200 }),
  match_threshold: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  margin: Type.Optional(Type.Number({ minimum: 0, exclusiveMaximum: 1 })),
  min_quality: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  enables_server_lookup: Type.Optional(Type.Boolean()),
  search_mode: Type.Optional(Type.Union([Type.Literal('exact'), Type.Literal('two_stage'), Type.Literal('auto')])),
  candidates: Type.Optional(Type.Integer({ minimum: 1, maximum: 65536 })),
  target_fpir: Type.Optional(
    Nullable(
      Type.Number({
        exclusiveMinimum: 0,
        exclusiveMaximum: 1,
        description:
          'Derive match_threshold by calibration so that the FPIR at the gallery size stays at most this; match_threshold serves until the first calibration. null: a fixed match_threshold',
      }),
    ),
  ),
  min_match_threshold: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'The lowest threshold calibration may set (default 0.5)' })),
}

/** What describes a project and may change later; the environment is fixed at creation. */
export const ProjectFieldsSchema = {
  name: Text({ minLength: 1, maxLength: 200 }),
  plan: Type.Union(Object.keys(PLANS).map((id) => Type.Literal(id))),
  mcc: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 9999 }))),
  phone_number: Type.Optional(Nullable(Text({ maxLength: 32 }))),
  website: Type.Optional(Nullable(Text({ maxLength: 2048 }))),
  icon_path: Type.Optional(Nullable(Text({ maxLength: 2048 }))),
  payment_account_id: Type.Optional(Nullable(Text({ maxLength: 200 }))),
}

export const ProjectInputSchema = {
  ...ProjectFieldsSchema,
  environment_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
}
