// Identity tokens: JWTs verified with jose against a JWKS URL or a public key, issuer and audience
// checked. Without either, a local development issuer signs tokens with an Ed25519 key kept in the
// data directory (`palmvein token` mints them); the service then accepts exactly those.
import { createPublicKey, type KeyObject } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import {
  createRemoteJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT,
  type JWK, type JWTVerifyGetKey,
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
  return {
    publicKey: createPublicKey({ key: publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' }),
    sign: (subject, ttlSeconds) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
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
  if (config.jwksUrl) {
    key = createRemoteJWKSet(new URL(config.jwksUrl))
    describe = `JWKS ${config.jwksUrl}`
  } else if (config.jwtPublicKey) {
    key = createPublicKey(config.jwtPublicKey.includes('BEGIN') ? config.jwtPublicKey : { key: JSON.parse(config.jwtPublicKey), format: 'jwk' })
    describe = 'configured public key'
  } else {
    key = (await loadLocalIssuer(config)).publicKey
    describe = `local development issuer (${path.join(config.dataDir, LOCAL_KEY_FILE)})`
  }
  return {
    describe,
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key as Parameters<typeof jwtVerify>[1], {
          issuer: config.jwtIssuer,
          audience: config.jwtAudience,
          algorithms: ALGORITHMS,
        })
        if (!payload.sub) throw new Error('token has no subject')
        return { subject: payload.sub }
      } catch (error) {
        const reason = (error as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'the identity token has expired' : 'the identity token is invalid'
        throw new ServiceError('unauthenticated', reason, { cause: error })
      }
    },
  }
}
