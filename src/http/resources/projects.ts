// The Project resource as the spec shows it.
import { PLANS } from '../../plans.js'
import type { ProjectRow } from '../../store/projects.js'
import { Nullable, Type } from '../schema.js'

export const ProjectSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    mcc: Nullable(Type.Integer()),
    icon_path: Nullable(Type.String()),
    payment_account_id: Nullable(Type.String()),
    phone_number: Nullable(Type.String()),
    website: Nullable(Type.String()),
    plan: Type.Object({
      id: Type.String(),
      name: Type.String(),
      headcount: Type.Integer(),
      daily_request_limit: Type.Integer(),
    }),
    environment_id: Nullable(Type.String({ format: 'uuid' })),
    enable_server_lookup: Type.Boolean(),
    environment_enables_server_lookup: Type.Boolean(),
  },
  { $id: 'Project' },
)

export function projectResource(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    mcc: row.mcc,
    icon_path: row.icon_path,
    payment_account_id: row.payment_account_id,
    phone_number: row.phone_number,
    website: row.website,
    plan: { id: row.plan, name: PLANS[row.plan].name, headcount: row.headcount, daily_request_limit: row.daily_request_limit },
    environment_id: row.environment_id,
    enable_server_lookup: row.enable_server_lookup,
    environment_enables_server_lookup: row.environment_enables_server_lookup ?? false,
  }
}
