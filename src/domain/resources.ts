// The long-lived resources that domain rules are handed, each taking the few it uses
// (Pick<DomainResources, 'sql' | 'galleries'>, ...). The composition root's AppContext extends this
// with what only the HTTP layer needs (credentials, health checks, audit, webhooks), so domain never
// reaches up to it.
import type { Logger } from 'pino'
import type { RateLimiter } from '../auth/rate-limit.js'
import type { Config } from '../config.js'
import type { Keyring } from '../keys/keyring.js'
import type { ServiceMetrics } from '../metrics/metrics.js'
import type { Database, Sql } from '../store/engine/database.js'
import type { Calibrator } from './accuracy/calibrator.js'
import type { EnrollmentSignals } from './enrollment/enrollment-signals.js'
import type { Galleries } from './galleries/galleries.js'
import type { ScanRecorder } from './identification/scans.js'

export interface DomainResources {
  config: Config
  db: Database
  sql: Sql
  log: Logger
  keyring: Keyring
  rateLimiter: RateLimiter
  /** Wakes terminals long-polling for an enrollment session (in-process and across processes). */
  enrollmentSignals: EnrollmentSignals
  /** One in-memory matcher gallery per environment, kept in sync across processes. */
  galleries: Galleries
  /** Derives the match threshold of environments given a target FPIR. */
  calibrator: Calibrator
  /** Batched writer of identify scan results (flushed on shutdown). */
  scans: ScanRecorder
  /** Prometheus counters and histograms (served on their own listener, config.metrics). */
  metrics: ServiceMetrics
  /** Cluster mode (src/cluster/node.ts): a new environment's shards are taken before its creation answers. */
  cluster?: { environmentCreated(environmentId: string, shards: number): Promise<void> }
  /** Set once shutdown begins: long polls return early. */
  shuttingDown: boolean
}
