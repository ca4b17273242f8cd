// Access to a device (T or K routes under /v1/device(s)/{device_id}) and a terminal's own project.
// A device of another tenant, or one not linked to any project yet, answers 404 exactly like a
// missing one.
import { ServiceError, notFound } from '../errors.js'
import type { Sql } from '../store/engine/database.js'
import { deviceById, type DeviceRow } from '../store/devices.js'
import type { Principal } from './principal.js'

export type LinkedDevice = DeviceRow & { project_id: string }

/** The device, if it exists and is linked to a project; whether the caller reaches that project is checked next. */
export async function linkedDevice(sql: Sql, deviceId: string): Promise<LinkedDevice> {
  const device = await deviceById(sql, deviceId)
  if (!device?.project_id) throw notFound('device')
  return device as LinkedDevice
}

/** A Device-Com caller: its device and mode, and the id of the project it is linked to. */
export function terminalOf(principal: Principal): { deviceId: string; mode: string; projectId: string } {
  if (principal.kind !== 'device') throw new ServiceError('forbidden', 'this operation needs a device token')
  if (!principal.projectId) {
    throw new ServiceError('forbidden', 'this device is not linked to a project yet: complete its registration first')
  }
  return { deviceId: principal.deviceId, mode: principal.mode, projectId: principal.projectId }
}
