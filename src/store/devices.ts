// Queries of the device aggregate: terminals, their device tokens (hashed) and registration codes.
import type { Sql } from './engine/database.js'

export type DeviceMode = 'access' | 'payment' | 'enrollment' | 'demo'

export interface DeviceRow {
  id: string
  project_id: string | null
  name: string | null
  address_city: string | null
  address_state: string | null
  address_country: string | null
  last_auth_at: Date | null
  last_activity_at: Date | null
  mode: DeviceMode
  hardware_platform: string
  enabled: boolean
  created_at: Date
}

// Never token_hash: it stays in this module's INSERT and in authenticate.ts.
const deviceColumns = (sql: Sql) => sql`
  id, project_id, name, address_city, address_state, address_country, last_auth_at,
  last_activity_at, mode, hardware_platform, enabled, created_at`

/**
 * A new, unlinked device and its registration code, in one transaction. Returns false when the
 * code is already taken (the caller draws another).
 */
export async function insertUnlinkedDevice(
  sql: Sql,
  device: {
    id: string
    mode: DeviceMode
    hardware_platform: string
    token_hash: Buffer
    code: string
    codeExpiresAt: Date
  },
): Promise<boolean> {
  return sql
    .begin(async (tx) => {
      await tx`
      INSERT INTO devices (id, mode, hardware_platform, token_hash)
      VALUES (${device.id}, ${device.mode}, ${device.hardware_platform}, ${device.token_hash})`
      const inserted = await tx`
      INSERT INTO registration_codes (code, device_id, expires_at)
      VALUES (${device.code}, ${device.id}, ${device.codeExpiresAt})
      ON CONFLICT (code) DO NOTHING RETURNING code`
      if (inserted.length === 0) throw new CodeTaken()
      return true
    })
    .catch((error: unknown) => {
      if (error instanceof CodeTaken) return false
      throw error
    })
}

class CodeTaken extends Error {}

/**
 * Devices never linked whose code has long expired can never be linked (codes are single use):
 * remove them so unauthenticated registrations do not pile up. Uses the (project_id, created_at)
 * index.
 */
export async function deleteAbandonedDevices(sql: Sql, createdBefore: Date): Promise<void> {
  await sql`DELETE FROM devices WHERE project_id IS NULL AND created_at < ${createdBefore}`
}

/**
 * Consume a registration code and link its device to the project, atomically. Returns the device
 * id, or null when the code is unknown, used or expired (nothing changes then).
 */
export async function linkDeviceByCode(
  sql: Sql,
  input: {
    code: string
    projectId: string
    name: string
    mode: DeviceMode
    now: Date
  },
): Promise<string | null> {
  return sql.begin(async (tx) => {
    const [code] = await tx<{ device_id: string }[]>`
      UPDATE registration_codes SET used_at = ${input.now}
      WHERE code = ${input.code} AND used_at IS NULL AND expires_at > ${input.now}
      RETURNING device_id`
    if (!code) return null
    const [device] = await tx<{ id: string }[]>`
      UPDATE devices SET project_id = ${input.projectId}, name = ${input.name}, mode = ${input.mode}
      WHERE id = ${code.device_id} AND project_id IS NULL RETURNING id`
    return device?.id ?? null
  })
}

export async function deviceById(sql: Sql, id: string): Promise<DeviceRow | null> {
  const [row] = await sql<DeviceRow[]>`SELECT ${deviceColumns(sql)} FROM devices WHERE id = ${id}`
  return row ?? null
}

export async function devicesOfProject(sql: Sql, projectId: string, page: number, perPage: number) {
  const [rows, [count]] = await Promise.all([
    sql<DeviceRow[]>`
      SELECT ${deviceColumns(sql)} FROM devices WHERE project_id = ${projectId}
      ORDER BY created_at, id LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`,
    sql<{ total: number }[]>`SELECT count(*)::int AS total FROM devices WHERE project_id = ${projectId}`,
  ])
  return { rows, total: count.total }
}

export async function updateDevice(sql: Sql, id: string, changes: { name?: string; enabled?: boolean }): Promise<DeviceRow | null> {
  const [row] = await sql<DeviceRow[]>`
    UPDATE devices SET
      name = coalesce(${changes.name ?? null}, name),
      enabled = coalesce(${changes.enabled ?? null}::boolean, enabled)
    WHERE id = ${id} RETURNING ${deviceColumns(sql)}`
  return row ?? null
}

/** The terminal did something (identify, enrollment, transaction). */
export async function touchDeviceActivity(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE devices SET last_activity_at = now() WHERE id = ${id}`
}

/** last_auth_at moves at most once a minute (a terminal polls all day long: no write per request). */
export async function touchDeviceAuth(sql: Sql, deviceId: string): Promise<void> {
  await sql`UPDATE devices SET last_auth_at = now() WHERE id = ${deviceId} AND (last_auth_at IS NULL OR last_auth_at < now() - interval '1 minute')`
}
