// Scan results and the palm position on the wire (spec "Scans, transactions, project").
import { timestamp } from '../../ids.js'
import type { ScanRow } from '../../store/scans.js'
import { Nullable, Type } from '../schema.js'

export const PalmPositionSchema = Type.Object(
  {
    x: Type.Number({ description: 'millimetres' }),
    y: Type.Number({ description: 'millimetres' }),
    z: Type.Number({ description: 'millimetres' }),
    pitch: Type.Number({ description: 'degrees' }),
    roll: Type.Number({ description: 'degrees' }),
    yaw: Type.Number({ description: 'degrees' }),
  },
  { additionalProperties: false },
)

export const ScanResultSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    caller_type: Type.Union([Type.Literal('api_key'), Type.Literal('token'), Type.Literal('device')]),
    operation_type: Type.Union([Type.Literal('identify'), Type.Literal('enroll')]),
    response_time_ms: Type.Integer({ minimum: 0 }),
    success: Type.Union([Type.Literal('true'), Type.Literal('false')]),
    created_at: Type.String({ format: 'date-time' }),
    posture: Nullable(PalmPositionSchema),
    results: Type.Array(
      Type.Object({
        match_score: Type.Number({ minimum: 0, maximum: 1 }),
        position: Type.Integer({ minimum: 1, description: 'rank of the candidate member, 1 = best' }),
      }),
    ),
    member_id: Nullable(Type.String({ format: 'uuid', description: 'the member an identify found; null otherwise' })),
  },
  { $id: 'ScanResult' },
)

export function scanResource(row: ScanRow) {
  return {
    id: row.id,
    caller_type: row.caller_type,
    operation_type: row.operation_type,
    response_time_ms: row.response_time_ms,
    success: row.success ? 'true' : 'false',
    created_at: timestamp(row.created_at),
    posture: row.posture,
    results: row.results,
    member_id: row.member_id,
  }
}
