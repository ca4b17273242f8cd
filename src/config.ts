// One typed configuration, read once from the environment and validated at boot.
// Precedence: explicit override passed to loadConfig() → environment variable → default.
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PLAN_IDS, type PlanId } from './plans.js'

export type MatcherBackendChoice = 'auto' | 'native' | 'wasm' | 'js'
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Config {
  /** TCP port of the HTTP server; 0 picks a free one. */
  port: number
  host: string
  /** HTTPS (PALMVEIN_TLS_*): null serves plain HTTP (TLS terminated in front of the service). */
  tls: TlsConfig | null
  /** Real PostgreSQL when set; the embedded PGlite in dataDir otherwise. */
  databaseUrl: string | null
  dataDir: string
  /**
   * The embedded database's page cache (PostgreSQL shared_buffers, e.g. '64MB'); null: the default
   * of store/engine/embedded.ts.
   */
  embeddedSharedBuffers: string | null
  /** 32-byte master key (base64); null means "generate one into dataDir on first start". */
  masterKey: Buffer | null
  /** PALMVEIN_ERASURE_LEDGER: the erasure ledger's file (domain/members/erasures.ts); null: erasures.log in dataDir. */
  erasureLedger: string | null
  jwksUrl: string | null
  jwtPublicKey: string | null
  jwtIssuer: string
  jwtAudience: string
  webhookAllowLocalhost: boolean
  /** Extra PEM CA certificate trusted for webhook deliveries (self-signed receivers in tests). */
  webhookCaFile: string | null
  webhookTimeoutMs: number
  /** How long a claimed delivery is held before another worker may take it (a crashed process's claims). */
  webhookLeaseMs: number
  webhookWorker: boolean
  nodeEnv: string
  matcherBackend: MatcherBackendChoice
  /** PALMVEIN_TRUST_PROXY: take the client address from X-Forwarded-For (behind a reverse proxy). */
  trustProxy: boolean
  /** PALMVEIN_AUDIT_RETENTION_DAYS: audit records older than this are purged daily (chains stay verifiable). */
  auditRetentionDays: number
  /** PALMVEIN_REGISTRATION_RATE: terminal registrations per minute per client address (no credential needed). */
  registrationsPerMinute: number
  /** PALMVEIN_SELF_SERVICE_PLANS: the plans an organization admin may create projects on (comma-separated; default sandbox). */
  selfServicePlans: PlanId[]
  /** PALMVEIN_HTTP_SERVER: uWebSockets.js, node:http, or the best that loads. */
  httpServer: 'uws' | 'node' | 'auto'
  /** PALMVEIN_CONSOLE_DIR: the built web console served at /console/; null: packages/console/dist of this installation. */
  consoleDir: string | null
  /** PALMVEIN_CONSOLE_OIDC_CLIENT_ID: the console signs in by OpenID Connect at PALMVEIN_JWT_ISSUER as this public client (http/console/oidc.ts). */
  consoleOidcClientId: string | null
  matcherThreads: number
  /** Threads that decrypt a large gallery load at boot (0: the main thread decrypts). */
  bootDecryptThreads: number
  /** PALMVEIN_SNAPSHOT_DIR: where the encrypted gallery snapshots are kept (domain/galleries/gallery-snapshots.ts); null: `snapshots` in dataDir. */
  snapshotDir: string | null
  /** PALMVEIN_SNAPSHOT_INTERVAL_MS: the least time between two snapshots of an environment; 0: no snapshots, boots read the database. */
  snapshotIntervalMs: number
  /**
   * PALMVEIN_IDLE_MEMORY_RELEASE_MS: how often a quiet service checks whether to give memory back
   * (idle-memory-release.ts); 0: never. Unset, `palmvein serve` checks every 10 s (cli/serve.ts) and
   * a service started inside another program (`start()`) never does.
   */
  idleMemoryReleaseMs: number
  /** Share of two-stage identify searches re-run exactly in the background (PALMVEIN_EXACT_AUDIT_RATE). */
  exactAuditRate: number
  /** The matcher's memory budget in bytes (PALMVEIN_MATCHER_MAX_MEMORY); null: the matcher's default. */
  matcherMaxMemoryBytes: number | null
  logLevel: LogLevel
  /** PALMVEIN_CALIBRATION_CHECK_MS: how often environments with a target FPIR are checked for (re)calibration. */
  calibrationCheckMs: number
  /** PALMVEIN_CALIBRATION_SAMPLES: stored identify captures searched per calibration (non-mated top-1 scores). */
  calibrationSamples: number
  /**
   * The Prometheus listener (GET /metrics), never the public port: PALMVEIN_METRICS_HOST (default
   * 127.0.0.1) and PALMVEIN_METRICS_PORT (default 9464; 0 turns it off). null: off. A port of 0
   * passed to loadConfig() picks a free one (tests).
   */
  metrics: { host: string; port: number } | null
  /** Cluster mode (PALMVEIN_NODE_URL set; docs/scale-out.md); null: this process holds every environment whole. */
  cluster: ClusterConfig | null
}

export interface ClusterConfig {
  /** PALMVEIN_NODE_URL: how other nodes reach this one (http://10.0.0.5:8080). */
  nodeUrl: string
  /** PALMVEIN_CLUSTER_SECRET: authenticates node-to-node calls (at least 32 characters). */
  secret: string
  /** PALMVEIN_NODE_LEASE_MS: how long a silent node keeps its shards. */
  leaseMs: number
  /** PALMVEIN_SHARD_REPLICAS: nodes holding each shard (fewer when fewer are up). */
  replicas: number
  /** PALMVEIN_NODE_MEMORY_BYTES: past this the node takes no more shards; null: no limit. */
  memoryBytes: number | null
  /** PALMVEIN_CLUSTER_HEDGE_MS: a shard search slower than this is also sent to another replica. */
  hedgeMs: number
  /**
   * PALMVEIN_PEER_PORT: node-to-node calls on their own listener (PALMVEIN_PEER_HOST, default HOST),
   * and not on the public port; null: on the public port. 0 picks a free port (tests).
   */
  peerListener: { host: string; port: number } | null
  /** PALMVEIN_PEER_REPLAY_WINDOW_MS: how far a signed peer request's timestamp may be from this node's clock. */
  replayWindowMs: number
  /** PALMVEIN_PEER_CA_FILE: a PEM CA trusted, besides the system's, for https node URLs (self-signed node certificates). */
  peerCaFile: string | null
}

export interface TlsConfig {
  certFile: string
  keyFile: string
  passphrase: string | null
  /** TLS 1.3 only unless PALMVEIN_TLS_MIN_VERSION=1.2. */
  minVersion: 'TLSv1.3' | 'TLSv1.2'
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

type Env = Record<string, string | undefined>

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
  }
  return value
}

function share(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (raw.trim() === '' || !(value >= 0 && value <= 1)) throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`)
  return value
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true
  if (['0', 'false', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`)
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!allowed.includes(raw as T)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`)
  }
  return raw as T
}

function someOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T[]): T[] {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const values = raw
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean)
  const unknown = values.filter((value) => !allowed.includes(value as T))
  if (unknown.length) throw new ConfigError(`${name} must list some of ${allowed.join(', ')}, got "${raw}"`)
  return [...new Set(values)] as T[]
}

function text(env: Env, name: string): string | null {
  const raw = env[name]
  return raw === undefined || raw === '' ? null : raw
}

/** A PostgreSQL memory setting: a whole number of kB, MB or GB, at least 1MB. */
function memorySize(env: Env, name: string): string | null {
  const raw = text(env, name)
  if (raw === null) return null
  const match = /^(\d{1,7})(kB|MB|GB)$/.exec(raw)
  const kib = match ? Number(match[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[match[2] as 'kB' | 'MB' | 'GB'] : 0
  if (kib < 1024) throw new ConfigError(`${name} must be a size such as 16MB or 1GB (at least 1MB), got ${JSON.stringify(raw)}`)
  return raw
}

function tlsFrom(env: Env): TlsConfig | null {
  const certFile = text(env, 'PALMVEIN_TLS_CERT_FILE')
  const keyFile = text(env, 'PALMVEIN_TLS_KEY_FILE')
  if (!certFile && !keyFile) return null
  if (!certFile || !keyFile) throw new ConfigError('set both PALMVEIN_TLS_CERT_FILE and PALMVEIN_TLS_KEY_FILE (PEM), or neither')
  const minVersion = oneOf(env, 'PALMVEIN_TLS_MIN_VERSION', ['1.3', '1.2'] as const, '1.3')
  return { certFile, keyFile, passphrase: text(env, 'PALMVEIN_TLS_KEY_PASSPHRASE'), minVersion: minVersion === '1.3' ? 'TLSv1.3' : 'TLSv1.2' }
}

const MIN_CLUSTER_SECRET = 32

/** The lease and the replicas: what every node and `palmvein cluster status` must agree on. */
export function clusterShape(env: Env = process.env): Pick<ClusterConfig, 'leaseMs' | 'replicas'> {
  return {
    leaseMs: integer(env, 'PALMVEIN_NODE_LEASE_MS', 10_000, 1_000, 3_600_000),
    replicas: integer(env, 'PALMVEIN_SHARD_REPLICAS', 2, 1, 16),
  }
}

function clusterFrom(env: Env, databaseUrl: string | null): ClusterConfig | null {
  const nodeUrl = text(env, 'PALMVEIN_NODE_URL')
  if (!nodeUrl) return null
  if (!URL.canParse(nodeUrl) || !/^https?:$/.test(new URL(nodeUrl).protocol))
    throw new ConfigError(`PALMVEIN_NODE_URL must be an http(s) URL, got ${JSON.stringify(nodeUrl)}`)
  if (!databaseUrl) throw new ConfigError('cluster mode (PALMVEIN_NODE_URL) needs PostgreSQL (DATABASE_URL): the embedded database serves one process')
  const secret = text(env, 'PALMVEIN_CLUSTER_SECRET')
  if (!secret || secret.length < MIN_CLUSTER_SECRET)
    throw new ConfigError(`cluster mode needs PALMVEIN_CLUSTER_SECRET, at least ${MIN_CLUSTER_SECRET} characters, the same on every node`)
  const memory = text(env, 'PALMVEIN_NODE_MEMORY_BYTES')
  return {
    nodeUrl: nodeUrl.replace(/\/+$/, ''),
    secret,
    ...clusterShape(env),
    memoryBytes: memory ? integer(env, 'PALMVEIN_NODE_MEMORY_BYTES', 0, 1 << 20, Number.MAX_SAFE_INTEGER) : null,
    hedgeMs: integer(env, 'PALMVEIN_CLUSTER_HEDGE_MS', 100, 1, 60_000),
    peerListener: peerListenerFrom(env),
    replayWindowMs: integer(env, 'PALMVEIN_PEER_REPLAY_WINDOW_MS', 30_000, 1_000, 300_000),
    peerCaFile: text(env, 'PALMVEIN_PEER_CA_FILE'),
  }
}

function peerListenerFrom(env: Env): ClusterConfig['peerListener'] {
  if (text(env, 'PALMVEIN_PEER_PORT') === null) return null
  const port = integer(env, 'PALMVEIN_PEER_PORT', 0, 1, 65535)
  if (port === integer(env, 'PORT', 8080, 0, 65535)) throw new ConfigError(`PALMVEIN_PEER_PORT must differ from PORT (${port})`)
  return { host: env.PALMVEIN_PEER_HOST || env.HOST || '0.0.0.0', port }
}

function metricsFrom(env: Env): Config['metrics'] {
  const port = integer(env, 'PALMVEIN_METRICS_PORT', 9464, 0, 65535)
  return port === 0 ? null : { host: env.PALMVEIN_METRICS_HOST || '127.0.0.1', port }
}

export function parseMasterKey(raw: string, name = 'PALMVEIN_MASTER_KEY'): Buffer {
  const key = Buffer.from(raw.trim(), 'base64')
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes in base64, got ${key.length} bytes`)
  return key
}

/** Secrets that may come from a file instead: NAME_FILE (Docker and Kubernetes secrets). */
export const SECRET_FILE_VARIABLES = [
  'DATABASE_URL',
  'PALMVEIN_MASTER_KEY',
  'PALMVEIN_CLUSTER_SECRET',
  'PALMVEIN_TLS_KEY_PASSPHRASE',
  'PALMVEIN_JWT_PUBLIC_KEY',
] as const

/** NAME's value, or the content (less a final newline) of the file NAME_FILE names; the error names the file, never its content. */
export function secretFromEnv(name: string, env: Env = process.env): string | null {
  const file = text(env, `${name}_FILE`)
  if (file === null) return text(env, name)
  if (text(env, name) !== null) throw new ConfigError(`set ${name} or ${name}_FILE, not both`)
  let content: string
  try {
    content = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
  } catch (error) {
    throw new ConfigError(`${name}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`)
  }
  if (content === '') throw new ConfigError(`${name}_FILE: ${file} is empty`)
  return content
}

/** `env` with each of SECRET_FILE_VARIABLES read through secretFromEnv. */
function withSecretFiles(env: Env): Env {
  const resolved = { ...env }
  for (const name of SECRET_FILE_VARIABLES) {
    const value = secretFromEnv(name, env)
    if (value !== null) resolved[name] = value
  }
  return resolved
}

export function loadConfig(overrides: Partial<Config> = {}, env: Env = process.env): Config {
  env = withSecretFiles(env)
  const nodeEnv = env.NODE_ENV ?? 'development'
  const masterKeyText = text(env, 'PALMVEIN_MASTER_KEY')
  const config: Config = {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    tls: tlsFrom(env),
    databaseUrl: text(env, 'DATABASE_URL'),
    dataDir: path.resolve(env.PALMVEIN_DATA_DIR || './data'),
    embeddedSharedBuffers: memorySize(env, 'PALMVEIN_EMBEDDED_SHARED_BUFFERS'),
    masterKey: masterKeyText ? parseMasterKey(masterKeyText) : null,
    erasureLedger: env.PALMVEIN_ERASURE_LEDGER ? path.resolve(env.PALMVEIN_ERASURE_LEDGER) : null,
    jwksUrl: text(env, 'PALMVEIN_JWKS_URL'),
    jwtPublicKey: text(env, 'PALMVEIN_JWT_PUBLIC_KEY'),
    jwtIssuer: env.PALMVEIN_JWT_ISSUER || 'palmvein-local',
    jwtAudience: env.PALMVEIN_JWT_AUDIENCE || 'palmvein',
    webhookAllowLocalhost: flag(env, 'WEBHOOK_ALLOW_LOCALHOST', false),
    webhookCaFile: text(env, 'PALMVEIN_WEBHOOK_CA_FILE'),
    webhookTimeoutMs: integer(env, 'PALMVEIN_WEBHOOK_TIMEOUT_MS', 20_000, 1, 120_000),
    webhookLeaseMs: 0,
    webhookWorker: flag(env, 'PALMVEIN_WEBHOOK_WORKER', true),
    nodeEnv,
    matcherBackend: oneOf(env, 'PALMVEIN_MATCHER_BACKEND', ['auto', 'native', 'wasm', 'js'] as const, 'auto'),
    trustProxy: flag(env, 'PALMVEIN_TRUST_PROXY', false),
    registrationsPerMinute: integer(env, 'PALMVEIN_REGISTRATION_RATE', 30, 1, 100_000),
    selfServicePlans: someOf(env, 'PALMVEIN_SELF_SERVICE_PLANS', PLAN_IDS, ['sandbox']),
    auditRetentionDays: integer(env, 'PALMVEIN_AUDIT_RETENTION_DAYS', 400, 1, 36_500),
    httpServer: oneOf(env, 'PALMVEIN_HTTP_SERVER', ['auto', 'uws', 'node'] as const, 'auto'),
    consoleDir: env.PALMVEIN_CONSOLE_DIR || null,
    consoleOidcClientId: text(env, 'PALMVEIN_CONSOLE_OIDC_CLIENT_ID'),
    matcherThreads: integer(env, 'PALMVEIN_MATCHER_THREADS', Math.max(1, os.availableParallelism()), 1, 256),
    bootDecryptThreads: integer(env, 'PALMVEIN_BOOT_DECRYPT_THREADS', Math.max(1, os.availableParallelism()), 0, 256),
    snapshotDir: env.PALMVEIN_SNAPSHOT_DIR ? path.resolve(env.PALMVEIN_SNAPSHOT_DIR) : null,
    snapshotIntervalMs: integer(env, 'PALMVEIN_SNAPSHOT_INTERVAL_MS', 300_000, 0, 86_400_000),
    idleMemoryReleaseMs: integer(env, 'PALMVEIN_IDLE_MEMORY_RELEASE_MS', 0, 0, 3_600_000),
    exactAuditRate: share(env, 'PALMVEIN_EXACT_AUDIT_RATE', 0.01),
    matcherMaxMemoryBytes: env.PALMVEIN_MATCHER_MAX_MEMORY ? integer(env, 'PALMVEIN_MATCHER_MAX_MEMORY', 0, 1 << 20, Number.MAX_SAFE_INTEGER) : null,
    logLevel: oneOf(env, 'PALMVEIN_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    calibrationCheckMs: integer(env, 'PALMVEIN_CALIBRATION_CHECK_MS', 60_000, 10, 86_400_000),
    calibrationSamples: integer(env, 'PALMVEIN_CALIBRATION_SAMPLES', 2_000, 20, 1_000_000),
    metrics: metricsFrom(env),
    cluster: null,
    ...overrides,
  }
  if (overrides.cluster === undefined) config.cluster = clusterFrom(env, config.databaseUrl)
  // The lease must outlast one attempt (receiver timeout) with room for recording it.
  if (!overrides.webhookLeaseMs) config.webhookLeaseMs = integer(env, 'PALMVEIN_WEBHOOK_LEASE_MS', config.webhookTimeoutMs + 60_000, 1_000, 86_400_000)
  if (config.jwksUrl && config.jwtPublicKey) {
    throw new ConfigError('set either PALMVEIN_JWKS_URL or PALMVEIN_JWT_PUBLIC_KEY, not both')
  }
  if (
    config.consoleOidcClientId &&
    (!(config.jwksUrl || config.jwtPublicKey) || !URL.canParse(config.jwtIssuer) || config.jwtAudience !== config.consoleOidcClientId)
  ) {
    throw new ConfigError(
      "PALMVEIN_CONSOLE_OIDC_CLIENT_ID needs the issuer the API trusts: PALMVEIN_JWKS_URL (or PALMVEIN_JWT_PUBLIC_KEY), PALMVEIN_JWT_ISSUER its URL, PALMVEIN_JWT_AUDIENCE the same client id (an ID token's aud)",
    )
  }
  if (config.webhookAllowLocalhost && config.nodeEnv === 'production') {
    throw new ConfigError('WEBHOOK_ALLOW_LOCALHOST is refused when NODE_ENV=production')
  }
  return config
}
