// Turn the Authorization header into a Principal. Every lookup hits the database (by primary key),
// so a revoked key or a disabled device stops on the very next request on every process.
import type { AppContext } from '../app-context.js'
import { ServiceError } from '../errors.js'
import type { CredentialKind } from '../http/route.js'
import { NO_PRINCIPAL, type Principal } from './principal.js'
import { BEARER_SECRET_SHAPE, secretMatches } from './secrets.js'

export const DEVICE_TOKEN_PREFIX = 'pvd_'

// (problem.ts adds the WWW-Authenticate challenge to every 401.)
export function unauthenticated(detail: string): ServiceError {
  return new ServiceError('unauthenticated', detail)
}

async function apiKey(app: AppContext, keyId: string, secret: string): Promise<Principal> {
  const [row] = await app.sql<{ org_id: string; secret_hash: Buffer; project_ids: string[] | null; revoked_at: Date | null; last_used_at: Date | null }[]>`
    SELECT org_id, secret_hash, project_ids, revoked_at, last_used_at FROM api_keys WHERE id = ${keyId}`
  if (!row || !secretMatches(secret, row.secret_hash)) throw unauthenticated('the API key is invalid')
  if (row.revoked_at) throw unauthenticated('the API key has been revoked')
  app.apiKeyUsage.touch(keyId, row.last_used_at)
  return { kind: 'key', keyId, orgId: row.org_id, projectIds: row.project_ids }
}

async function deviceToken(app: AppContext, deviceId: string, secret: string): Promise<Principal> {
  const [row] = await app.sql<{ token_hash: Buffer; project_id: string | null; enabled: boolean; mode: string }[]>`
    UPDATE devices SET last_auth_at = now() WHERE id = ${deviceId}
    RETURNING token_hash, project_id, enabled, mode`
  if (!row || !secretMatches(secret, row.token_hash)) throw unauthenticated('the device token is invalid')
  if (!row.enabled) throw new ServiceError('forbidden', 'this device is disabled')
  return { kind: 'device', deviceId, projectId: row.project_id, mode: row.mode }
}

function kindOf(principal: Principal): CredentialKind {
  return principal.kind === 'none' ? 'none' : principal.kind
}

const KIND_NAMES: Record<CredentialKind, string> = {
  token: 'an identity token', key: 'an API key', device: 'a device token', none: 'no credential',
}

export async function authenticate(app: AppContext, header: string, accepted: CredentialKind[]): Promise<Principal> {
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
    principal = await apiKey(app, parts[1], parts[2])
  } else if (credential.split('.').length === 3) {
    principal = { kind: 'token', subject: (await app.tokens.verify(credential)).subject }
  } else {
    throw unauthenticated('the credential is neither an identity token nor an API key')
  }

  if (!accepted.includes(kindOf(principal))) {
    const allowed = accepted.filter((kind) => kind !== 'none').map((kind) => KIND_NAMES[kind]).join(' or ')
    throw new ServiceError('forbidden', `this operation needs ${allowed}, not ${KIND_NAMES[kindOf(principal)]}`)
  }
  return principal
}
