// Long-lived resources built once by the composition root (server.ts) and handed to every route.
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { Database, Sql } from './store/database.js'
import type { IdentityTokens } from './auth/identity-tokens.js'
import type { Keyring } from './domain/keyring.js'
import type { ApiKeyLookup } from './auth/api-key-lookup.js'
import type { DeviceTokenLookup } from './auth/device-token-lookup.js'
import type { UsageTouch } from './auth/usage-touch.js'
import type { RateLimiter } from './domain/rate-limit.js'
import type { HealthCheck } from './health.js'
import type { EnrollmentSignals } from './domain/enrollment-signals.js'
import type { Galleries } from './domain/galleries.js'
import type { Calibrator } from './domain/calibration.js'
import type { ScanRecorder } from './domain/scans.js'
import type { WebhookEngine } from './webhooks/index.js'
import type { AuditTrail } from './domain/audit.js'
import type { ServiceMetrics } from './metrics/metrics.js'

export interface AppContext {
  config: Config
  db: Database
  sql: Sql
  log: Logger
  tokens: IdentityTokens
  keyring: Keyring
  /** Reads an API key with the project its request names (cached where the database allows). */
  apiKeys: ApiKeyLookup
  /** Writes an API key's last_used_at, at most once a minute. */
  apiKeyUsage: UsageTouch
  /** Reads a device token's device with its project (cached where the database allows). */
  deviceTokens: DeviceTokenLookup
  /** Writes a device's last_auth_at, at most once a minute. */
  deviceAuthUsage: UsageTouch
  rateLimiter: RateLimiter
  /** Checks behind /healthz; modules register theirs at boot. */
  health: HealthCheck[]
  /** Wakes terminals long-polling for an enrollment session (in-process and across processes). */
  enrollmentSignals: EnrollmentSignals
  /** One in-memory matcher gallery per environment, kept in sync across processes. */
  galleries: Galleries
  /** Derives the match threshold of environments given a target FPIR. */
  calibrator: Calibrator
  /** Batched writer of identify scan results (flushed on shutdown). */
  scans: ScanRecorder
  /** Webhook dispatcher and delivery worker; its guard checks subscription URLs. */
  webhooks: WebhookEngine
  /** The audit trail: every request that reaches tenant data, changes anything or is refused. */
  audit: AuditTrail
  /** Prometheus counters and histograms (served on their own listener, config.metrics). */
  metrics: ServiceMetrics
  /** Cluster mode (src/cluster/node.ts): a new environment's shards are taken before its creation answers. */
  cluster?: { environmentCreated(environmentId: string, shards: number): Promise<void> }
  /** Set once shutdown begins: long polls return early. */
  shuttingDown: boolean
}
