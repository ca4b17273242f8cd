// The service's Prometheus metrics (prom-client), one registry per service so that several services
// in one process (tests, embedders) never share counters. The hot path calls plain methods; the
// gauges that describe state (gallery rows, pending deliveries) are read when scraped.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** What a gallery looks like to a scrape. */
export interface GalleryGauge {
  environmentId: string
  rows: number
  loading: boolean
  /** The threshold identify uses (null until the environment's settings are read). */
  matchThreshold: number | null
}

export type WebhookAttemptOutcome = 'success' | 'retry' | 'failed' | 'gone'

export interface ServiceMetrics {
  readonly registry: Registry
  /** One answered HTTP request; `route` is the route template (never a path with ids). */
  request(method: string, route: string, status: number, seconds: number): void
  identified(status: string): void
  /** One pass of the matcher over a gallery, serving `probes` probes. */
  scan(probes: number, seconds: number): void
  webhookAttempt(outcome: WebhookAttemptOutcome): void
  dbQuery(seconds: number): void
  /** A node-to-node call refused before it ran (peer-signature.ts says why). */
  peerRefused(reason: string): void
}

export interface MetricsSources {
  galleries(): GalleryGauge[]
  pendingDeliveries(): Promise<number>
}

// Anything else (a client's made-up method) is counted under one label value, not one per spelling.
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

// Latency buckets from 0.25 ms (a cached GET) to 10 s (a long poll or a huge scan).
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * With metrics off (PALMVEIN_METRICS_PORT=0) nobody can scrape: the hot path records nothing and
 * no default collectors (event-loop monitor) run.
 */
export function disabledMetrics(): ServiceMetrics {
  const nothing = () => {}
  return { registry: new Registry(), request: nothing, identified: nothing, scan: nothing, webhookAttempt: nothing, dbQuery: nothing, peerRefused: nothing }
}

export function createMetrics(sources: MetricsSources): ServiceMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const series = createHotPathSeries(registry)
  registerStateGauges(registry, sources)
  return {
    registry,
    request(rawMethod, route, status, seconds) {
      const method = METHODS.has(rawMethod) ? rawMethod : 'OTHER'
      series.requests.inc({ method, route, status })
      series.requestSeconds.observe({ method, route }, seconds)
      if (status === 429) series.rateLimited.inc()
    },
    identified: (status) => series.identifies.inc({ status }),
    scan: (probes, seconds) => series.scanSeconds.observe({ batch: probes }, seconds),
    webhookAttempt: (outcome) => series.attempts.inc({ outcome }),
    dbQuery: (seconds) => series.dbSeconds.observe(seconds),
    peerRefused: (reason) => series.peerRefusals.inc({ reason }),
  }
}

/** The counters and histograms the hot path records into. */
function createHotPathSeries(registry: Registry) {
  const registers = [registry]
  const requests = new Counter({
    name: 'palmvein_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    registers,
  })
  const requestSeconds = new Histogram({
    name: 'palmvein_http_request_duration_seconds',
    help: "Time from a request's arrival to its answer, by method and route template",
    labelNames: ['method', 'route'],
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const identifies = new Counter({
    name: 'palmvein_identify_total',
    help: 'Identifications decided, by status (Found, Ambiguous, NotFound)',
    labelNames: ['status'],
    registers,
  })
  const scanSeconds = new Histogram({
    name: 'palmvein_matcher_scan_seconds',
    help: 'One matcher pass over a gallery, by the number of probes it served (batch)',
    labelNames: ['batch'],
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const attempts = new Counter({
    name: 'palmvein_webhook_attempts_total',
    help: 'Webhook delivery attempts: success, retry (failed, another attempt scheduled), failed (the last attempt failed), gone (the receiver answered 410: subscription disabled)',
    labelNames: ['outcome'],
    registers,
  })
  const dbSeconds = new Histogram({
    name: 'palmvein_db_query_duration_seconds',
    help: 'SQL statements, from being sent (or queued for a connection) to their result',
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const peerRefusals = new Counter({
    name: 'palmvein_peer_calls_refused_total',
    help: 'Node-to-node calls refused before they ran: unsigned, bad_signature, stale (timestamp outside the replay window), replayed (nonce seen)',
    labelNames: ['reason'],
    registers,
  })
  const rateLimited = new Counter({
    name: 'palmvein_rate_limited_total',
    help: 'Requests refused with 429 (plan rate, daily limit, terminal registrations)',
    registers,
  })
  return { requests, requestSeconds, identifies, scanSeconds, attempts, dbSeconds, peerRefusals, rateLimited }
}

/** The gauges read when scraped: each gallery's state and the deliveries waiting. */
function registerStateGauges(registry: Registry, sources: MetricsSources): void {
  const registers = [registry]
  const perGallery = (name: string, help: string, valueOf: (gallery: GalleryGauge) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['environment_id'],
      registers,
      collect() {
        this.reset()
        for (const gallery of sources.galleries()) {
          const value = valueOf(gallery)
          if (value !== null) this.set({ environment_id: gallery.environmentId }, value)
        }
      },
    })
  perGallery('palmvein_gallery_rows', 'Reference rows in the matcher gallery of an environment (two per member with both hands)', (gallery) => gallery.rows)
  perGallery('palmvein_gallery_loading', "1 while an environment's gallery is loading (identify answers 503), else 0", (gallery) => (gallery.loading ? 1 : 0))
  // Left out until the environment's settings are read (matchThreshold null).
  perGallery(
    'palmvein_match_threshold',
    'The match threshold identify uses in an environment (derived by calibration when it has a target_fpir)',
    (gallery) => gallery.matchThreshold,
  )
  new Gauge({
    name: 'palmvein_webhook_pending_deliveries',
    help: 'Webhook deliveries waiting for an attempt (in every process on this database)',
    registers,
    async collect() {
      // While the database cannot answer the series is left out rather than failing the scrape.
      this.reset()
      const pending = await sources.pendingDeliveries().catch(() => null)
      if (pending !== null) this.set(pending)
    },
  })
}
