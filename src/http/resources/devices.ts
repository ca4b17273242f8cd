// The Device resource and the device modes on the wire (spec "Devices and enrollment sessions").
import { DEVICE_MODES } from '../../domain/devices/devices.js'
import { timestamp } from '../../ids.js'
import type { DeviceRow } from '../../store/devices.js'
import { Nullable, Type } from '../schema.js'

export const DeviceModeSchema = Type.Union(
  DEVICE_MODES.map((mode) => Type.Literal(mode)),
  {
    description: 'access, payment, enrollment or demo',
  },
)

export const DeviceSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Nullable(Type.String()),
    address_city: Nullable(Type.String()),
    address_state: Nullable(Type.String()),
    address_country: Nullable(Type.String()),
    last_auth_at: Nullable(Type.String({ format: 'date-time', description: 'last request authenticated with the device token' })),
    last_activity_at: Nullable(Type.String({ format: 'date-time', description: 'last identify, enrollment or transaction of the terminal' })),
    mode: DeviceModeSchema,
    hardware_platform: Type.String(),
    enabled: Type.Boolean(),
  },
  { $id: 'Device' },
)

export function deviceResource(row: DeviceRow) {
  return {
    id: row.id,
    name: row.name,
    address_city: row.address_city,
    address_state: row.address_state,
    address_country: row.address_country,
    last_auth_at: timestamp(row.last_auth_at),
    last_activity_at: timestamp(row.last_activity_at),
    mode: row.mode,
    hardware_platform: row.hardware_platform,
    enabled: row.enabled,
  }
}
