// Turn the Authorization header into a Principal. A revoked key or a disabled device stops on the
// very next request on every process: every lookup reads the database (by primary key), except on
// the embedded database this process serves, where API keys and device tokens are cached until any
// access fact changes (access-cache.ts). An API key is read together with the project the path
// names, a device token with its device's project, so neither costs an extra round trip.
import { ServiceError } from '../errors.js'
import type { ApiKeyLookup } from './api-key-lookup.js'
import type { CredentialKind } from './credentials.js'
import type { DeviceTokenLookup } from './device-token-lookup.js'
import type { IdentityTokens } from './identity-tokens.js'
import { NO_PRINCIPAL, type Principal } from './principal.js'
import { BEARER_SECRET_SHAPE, secretMatches } from './secrets.js'
import type { UsageTouch } from './usage-touch.js'

/** The lookups a credential is checked against (the composition root's AppContext has them all). */
export interface Credentials {
  tokens: IdentityTokens
  apiKeys: ApiKeyLookup
  apiKeyUsage: UsageTouch
  deviceTokens: DeviceTokenLookup
  deviceAuthUsage: UsageTouch
}

export const DEVICE_TOKEN_PREFIX = 'pvd_'
const API_KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\./i

// (problem.ts adds the WWW-Authenticate challenge to every 401.)
export function unauthenticated(detail: string): ServiceError {
  return new ServiceError('unauthenticated', detail)
}

async function apiKey(app: Pick<Credentials, 'apiKeys' | 'apiKeyUsage'>, keyId: string, secret: string, projectId: string | null): Promise<Principal> {
  const found = await app.apiKeys.find(keyId, projectId)
  if (!found || !secretMatches(secret, found.key.secret_hash)) throw unauthenticated('unknown or revoked API key')
  const { key, project } = found
  if (key.revoked_at) throw unauthenticated('the API key has been revoked')
  app.apiKeyUsage.touch(keyId, key.last_used_at)
  return {
    kind: 'key',
    keyId,
    orgId: key.org_id,
    projectIds: key.project_ids,
    prefetched: projectId ? { projectId, project } : undefined,
  }
}

async function deviceToken(app: Pick<Credentials, 'deviceTokens' | 'deviceAuthUsage'>, deviceId: string, secret: string): Promise<Principal> {
  const found = await app.deviceTokens.find(deviceId)
  if (!found || !secretMatches(secret, found.device.token_hash)) throw unauthenticated('the device token is invalid')
  const { device, project } = found
  app.deviceAuthUsage.touch(deviceId, device.last_auth_at)
  if (!device.enabled) throw new ServiceError('forbidden', 'this device is disabled')
  return { kind: 'device', deviceId, projectId: device.project_id, mode: device.mode, project }
}

function kindOf(principal: Principal): CredentialKind {
  return principal.kind === 'none' ? 'none' : principal.kind
}

const KIND_NAMES: Record<CredentialKind, string> = {
  token: 'an identity token',
  key: 'an API key',
  device: 'a device token',
  none: 'no credential',
}

/** `projectId`: the project the request's path names, if any (read with an API key in one query). */
export async function authenticate(app: Credentials, header: string, accepted: CredentialKind[], projectId: string | null = null): Promise<Principal> {
  if (accepted.includes('none') && !header) return NO_PRINCIPAL
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match) throw unauthenticated(header ? 'the Authorization header must be "Bearer <credential>"' : 'this operation needs a bearer credential')
  const credential = match[1]

  let principal: Principal
  if (credential.startsWith(DEVICE_TOKEN_PREFIX)) {
    const parts = BEARER_SECRET_SHAPE.exec(credential.slice(DEVICE_TOKEN_PREFIX.length))
    if (!parts) throw unauthenticated('the device token is malformed')
    principal = await deviceToken(app, parts[1], parts[2])
  } else if (BEARER_SECRET_SHAPE.test(credential)) {
    const parts = BEARER_SECRET_SHAPE.exec(credential)!
    principal = await apiKey(app, parts[1], parts[2], projectId)
  } else if (API_KEY_ID.test(credential)) {
    // A key id with a secret of the wrong length is still an API key, just not one we issued.
    throw unauthenticated('unknown or revoked API key')
  } else if (credential.split('.').length === 3) {
    principal = { kind: 'token', subject: (await app.tokens.verify(credential)).subject }
  } else {
    throw unauthenticated('the credential is neither an identity token nor an API key')
  }

  if (!accepted.includes(kindOf(principal))) {
    const allowed = accepted
      .filter((kind) => kind !== 'none')
      .map((kind) => KIND_NAMES[kind])
      .join(' or ')
    throw new ServiceError('forbidden', `this operation needs ${allowed}, not ${KIND_NAMES[kindOf(principal)]}`)
  }
  return principal
}
