// The Member resource and the member fields a request may send (spec "Members").
import { MAX_METADATA_BYTES } from '../../domain/members/members.js'
import { timestamp } from '../../ids.js'
import type { MemberRow } from '../../store/members.js'
import { Nullable, Text, Type } from '../schema.js'

export const MemberSchema = Type.Object(
  {
    member_id: Type.String({ format: 'uuid' }),
    display_name: Type.String(),
    metadata: Nullable(Type.String({ description: 'the metadata sent: a string as itself, any other JSON value as its JSON text' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    palm_templates_enrolled: Type.Integer({ minimum: 0, description: 'captures stored (2 per enrolled hand)' }),
    last_enrolled_at: Nullable(Type.String({ format: 'date-time' })),
    last_used_at: Nullable(Type.String({ format: 'date-time', description: 'last successful identification' })),
  },
  { $id: 'Member' },
)

export const DisplayName = Text({ minLength: 1, maxLength: 200 })

// Any JSON value: its size, and NUL or lone surrogates in its strings and field names, are rules the
// document can only say in words (OpenAPI 3.0 has no propertyNames); json-text.ts and the domain check them.
export const Metadata = Type.Unknown({
  description: `any JSON value, or null; at most ${MAX_METADATA_BYTES} bytes of JSON; no string or field name in it may contain NUL (U+0000) or a lone UTF-16 surrogate`,
})

export function memberResource(row: MemberRow) {
  return {
    member_id: row.id,
    display_name: row.display_name,
    metadata: row.metadata === null ? null : typeof row.metadata === 'string' ? row.metadata : JSON.stringify(row.metadata),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    palm_templates_enrolled: row.palm_templates_enrolled,
    last_enrolled_at: timestamp(row.last_enrolled_at),
    last_used_at: timestamp(row.last_used_at),
  }
}
