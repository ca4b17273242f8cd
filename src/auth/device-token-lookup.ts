// The device a device token names and its project, read in one query per request, or from the
// access cache where the database allows it (access-cache.ts). The token's secret is still checked
// against its hash on every request; disabling a device, rotating its token or changing its
// project shows on the very next request.
import type { Database } from '../store/engine/database.js'
import { deviceWithProject } from '../store/projects.js'
import { createAccessCache } from './access-cache.js'

type Found = NonNullable<Awaited<ReturnType<typeof deviceWithProject>>>

export interface DeviceTokenLookup {
  /** Null when there is no such device; `project` null while it is not linked to one. */
  find(deviceId: string): Promise<Found | null>
}

export function createDeviceTokenLookup(db: Pick<Database, 'sql' | 'accessVersion'>): DeviceTokenLookup {
  const cache = createAccessCache<Found>(db)
  return {
    find: (deviceId) => cache.get(deviceId, () => deviceWithProject(db.sql, deviceId)),
  }
}
