// Devices (terminals): registration of a proto-terminal, linking it to a sandbox project with its
// single-use code, listing and updating. A device token `pvd_{device_id}.{secret}` is returned
// once at registration; only its SHA-256 is stored (like API keys).
import { randomBytes } from 'node:crypto'
import { v5 as uuidv5 } from 'uuid'
import type { DomainResources } from '../resources.js'
import { DEVICE_TOKEN_PREFIX } from '../../auth/authenticate.js'
import { hashSecret, newSecret } from '../../auth/secrets.js'
import { ServiceError, notFound } from '../../errors.js'
import { newId } from '../../ids.js'
import type { Sql } from '../../store/engine/database.js'
import {
  deleteAbandonedDevices,
  devicesOfProject,
  insertUnlinkedDevice,
  linkDeviceByCode,
  updateDevice,
  type DeviceMode,
  type DeviceRow,
} from '../../store/devices.js'
import type { ProjectRow } from '../../store/projects.js'

export const DEVICE_MODES: readonly DeviceMode[] = ['access', 'payment', 'enrollment', 'demo']

export const REGISTRATION_CODE_LENGTH = 8
export const REGISTRATION_CODE_TTL_MS = 15 * 60_000
// No 0/O, 1/I: the code is read off a screen and typed by a person. 32 symbols, so a byte & 31 is
// unbiased; 8 of them are 40 bits, guessed only through authenticated, rate-limited calls.
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
// Unlinked devices older than this can never be linked (their code expired): swept away.
const ABANDONED_AFTER_MS = 60 * 60_000

function newRegistrationCode(): string {
  const bytes = randomBytes(REGISTRATION_CODE_LENGTH)
  let code = ''
  for (const byte of bytes) code += CODE_ALPHABET[byte & 31]
  return code
}

/** Codes are shown upper-case; a person may type them in lower case or with spaces around. */
export const normaliseRegistrationCode = (code: string): string => code.trim().toUpperCase()

// Registration needs no credential: each client address gets a budget, counted in the database like
// a project's requests (so every process shares it), under an id derived from the address.
const REGISTRATION_BUCKETS = 'c5b8d3f0-2a4e-4c1e-9a7d-6f1b0e8d2c41'
/** A day's budget: four hours at the full rate. */
const REGISTRATION_MINUTES_PER_DAY = 240

/** Charges one registration to the client address; throws 429 past its budget. Returns the RateLimit-* headers. */
export function chargeRegistration(app: Pick<DomainResources, 'rateLimiter' | 'config'>, clientAddress: string): Promise<Record<string, string>> {
  const perMinute = app.config.registrationsPerMinute
  return app.rateLimiter.charge({
    id: uuidv5(`registration:${clientAddress}`, REGISTRATION_BUCKETS),
    label: `client address ${clientAddress}'s registration`,
    requests_per_minute: perMinute,
    daily_request_limit: perMinute * REGISTRATION_MINUTES_PER_DAY,
  })
}

export async function registerDevice(app: Pick<DomainResources, 'sql'>, input: { hardware_platform: string; mode: DeviceMode }) {
  const now = Date.now()
  await deleteAbandonedDevices(app.sql, new Date(now - ABANDONED_AFTER_MS))
  const id = newId()
  const secret = newSecret()
  for (let attempt = 0; attempt < 5; attempt++) {
    const code = newRegistrationCode()
    const inserted = await insertUnlinkedDevice(app.sql, {
      id,
      mode: input.mode,
      hardware_platform: input.hardware_platform,
      token_hash: hashSecret(secret),
      code,
      codeExpiresAt: new Date(now + REGISTRATION_CODE_TTL_MS),
    })
    if (inserted) return { device_id: id, registration_code: code, device_token: `${DEVICE_TOKEN_PREFIX}${id}.${secret}` }
  }
  // 5 collisions in a 2^40 space means something else is wrong.
  throw new Error('could not draw a free registration code')
}

/** complete_registration: only a sandbox project may link a terminal (spec rule 1). */
export async function completeRegistration(
  app: Pick<DomainResources, 'sql'>,
  project: ProjectRow,
  input: {
    registration_code: string
    device_name: string
    device_mode: DeviceMode
  },
): Promise<string> {
  if (project.plan !== 'sandbox') {
    throw new ServiceError('sandbox_required', `project ${project.id} is on the ${project.plan} plan; only sandbox projects may complete a device registration`)
  }
  const deviceId = await linkDeviceByCode(app.sql, {
    code: normaliseRegistrationCode(input.registration_code),
    projectId: project.id,
    name: input.device_name,
    mode: input.device_mode,
    now: new Date(),
  })
  if (!deviceId) {
    throw new ServiceError('registration_code_invalid', 'the registration code is unknown, already used or expired', {
      errors: [{ path: '/registration_code', message: 'unknown, used or expired' }],
    })
  }
  return deviceId
}

/** One page of the project's devices, oldest first, and their total. */
export function listDevices(sql: Sql, projectId: string, page: { page: number; per_page: number }) {
  return devicesOfProject(sql, projectId, page.page, page.per_page)
}

/** Rename, or enable/disable (a disabled terminal's token is refused on its next request). */
export async function changeDevice(sql: Sql, deviceId: string, changes: { name?: string; enabled?: boolean }): Promise<DeviceRow> {
  const updated = await updateDevice(sql, deviceId, changes)
  if (!updated) throw notFound('device')
  return updated
}
