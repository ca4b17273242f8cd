// Access to a device (T or K routes under /v1/device(s)/{device_id}): the device → its project →
// the project access check and rate limit. A device of another tenant, or one not linked to any
// project yet, answers 404 exactly like a missing one.
import { ServiceError, notFound } from '../errors.js'
import type { RouteContext } from '../http/route.js'
import { deviceById, type DeviceRow } from '../store/devices.js'
import type { ProjectRow } from '../store/projects.js'
import { loadProject } from './access.js'

type Caller = Pick<RouteContext, 'principal' | 'app'> & { responseHeaders?: Record<string, string> }

export async function loadDevice(context: Caller, deviceId: string): Promise<{ device: DeviceRow & { project_id: string }; project: ProjectRow }> {
  const device = await deviceById(context.app.sql, deviceId)
  if (!device || !device.project_id) throw notFound('device')
  try {
    const project = await loadProject(context, device.project_id)
    return { device: device as DeviceRow & { project_id: string }, project }
  } catch (error) {
    // The project's 404 must not reveal that the device exists in another tenant.
    if (error instanceof ServiceError && error.code === 'not_found') throw notFound('device')
    throw error
  }
}

/** A Device-Com caller: the terminal's project (counted against its rate limit). */
export async function loadTerminalProject(context: Caller): Promise<{ deviceId: string; mode: string; project: ProjectRow }> {
  const { principal } = context
  if (principal.kind !== 'device') throw new ServiceError('forbidden', 'this operation needs a device token')
  if (!principal.projectId) {
    throw new ServiceError('forbidden', 'this device is not linked to a project yet: complete its registration first')
  }
  return { deviceId: principal.deviceId, mode: principal.mode, project: await loadProject(context, principal.projectId) }
}
