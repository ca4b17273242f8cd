// Identity tokens: JWTs verified with jose against a JWKS URL or a public key, issuer and audience
// checked. Without either, a local development issuer signs tokens with an Ed25519 key kept in the
// data directory (`palmvein token` mints them); the service then accepts exactly those.
import { createPublicKey, type KeyObject } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose'
import type { Config } from '../config.js'
import { ServiceError } from '../errors.js'

const ALGORITHMS = ['RS256', 'ES256', 'EdDSA']
const LOCAL_KEY_FILE = 'identity-issuer.jwk.json'

export interface IdentityTokens {
  /** Where tokens come from, for the boot log. */
  describe: string
  /** The `sub` of a valid token; throws ServiceError('unauthenticated') otherwise. */
  verify(token: string): Promise<{ subject: string }>
}

export interface LocalIssuer {
  sign(subject: string, ttlSeconds: number): Promise<string>
  publicKey: KeyObject | Uint8Array
  /** The key id in every token it signs: its JWK thumbprint (RFC 7638). */
  keyId: string
}

/** The development issuer's key pair, created on first use (O_EXCL, so concurrent starts agree). */
export async function loadLocalIssuer(config: Pick<Config, 'dataDir' | 'jwtIssuer' | 'jwtAudience'>): Promise<LocalIssuer> {
  const file = path.join(config.dataDir, LOCAL_KEY_FILE)
  await fs.mkdir(config.dataDir, { recursive: true, mode: 0o700 })
  let jwk: JWK
  try {
    jwk = JSON.parse(await fs.readFile(file, 'utf8')) as JWK
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })
    jwk = { ...(await exportJWK(privateKey)), alg: 'EdDSA' }
    try {
      await fs.writeFile(file, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' })
    } catch (writeError) {
      if ((writeError as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError
      jwk = JSON.parse(await fs.readFile(file, 'utf8')) as JWK
    }
  }
  const privateKey = await importJWK(jwk, 'EdDSA')
  const { d: _private, ...publicJwk } = jwk
  const keyId = await calculateJwkThumbprint(publicJwk)
  return {
    publicKey: createPublicKey({ key: publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' }),
    keyId,
    sign: (subject, ttlSeconds) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: keyId })
        .setSubject(subject)
        .setIssuer(config.jwtIssuer)
        .setAudience(config.jwtAudience)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
        .sign(privateKey),
  }
}

export async function loadIdentityTokens(config: Config): Promise<IdentityTokens> {
  let key: KeyObject | Uint8Array | JWTVerifyGetKey
  let describe: string
  let localKeyId: string | null = null
  if (config.jwksUrl) {
    key = createRemoteJWKSet(new URL(config.jwksUrl))
    describe = `JWKS ${config.jwksUrl}`
  } else if (config.jwtPublicKey) {
    key = createPublicKey(config.jwtPublicKey.includes('BEGIN') ? config.jwtPublicKey : { key: JSON.parse(config.jwtPublicKey), format: 'jwk' })
    describe = 'configured public key'
  } else {
    const issuer = await loadLocalIssuer(config)
    key = issuer.publicKey
    localKeyId = issuer.keyId
    describe = `local development issuer (${path.join(config.dataDir, LOCAL_KEY_FILE)})`
  }
  return {
    describe,
    async verify(token) {
      // A token of another data directory's development issuer: say so rather than a bare "invalid".
      const kid = keyIdOf(token)
      if (localKeyId && kid && kid !== localKeyId) {
        throw new ServiceError(
          'unauthenticated',
          `the identity token is signed by an unknown key (kid ${kid}): it comes from another issuer or data directory; this service's development issuer is kid ${localKeyId}`,
        )
      }
      try {
        const { payload } = await jwtVerify(token, key as Parameters<typeof jwtVerify>[1], {
          issuer: config.jwtIssuer,
          audience: config.jwtAudience,
          algorithms: ALGORITHMS,
        })
        if (!payload.sub) throw new Error('token has no subject')
        return { subject: payload.sub }
      } catch (error) {
        throw new ServiceError('unauthenticated', rejection(error as { code?: string; claim?: string }, kid), { cause: error })
      }
    },
  }
}

function keyIdOf(token: string): string | null {
  try {
    const { kid } = decodeProtectedHeader(token)
    return typeof kid === 'string' ? kid : null
  } catch {
    return null
  }
}

/** Why jose refused the token, in words an operator can act on (never the token itself). */
function rejection(error: { code?: string; claim?: string }, kid: string | null): string {
  switch (error.code) {
    case 'ERR_JWT_EXPIRED':
      return 'the identity token has expired'
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return error.claim === 'iss' || error.claim === 'aud'
        ? `the identity token's ${error.claim} claim is not the one this service expects`
        : 'the identity token is invalid'
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return `the identity token is signed by an unknown key (kid ${kid ?? 'none'}): no key of the JWKS matches`
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return "the identity token's signature does not verify against this service's issuer key"
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'the identity token is signed with an algorithm this service does not accept (RS256, ES256, EdDSA)'
    default:
      return 'the identity token is invalid'
  }
}
