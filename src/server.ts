// The composition root: builds every long-lived resource once from the configuration, starts the
// HTTP server, and closes everything in reverse order. Tests call start({ config: { port: 0 } }).
import type { Logger } from 'pino'
import type { AppContext } from './app-context.js'
import { createApiKeyLookup } from './auth/api-key-lookup.js'
import { createApiKeyUsage, createDeviceAuthUsage } from './auth/usage-touch.js'
import { createDeviceTokenLookup } from './auth/device-token-lookup.js'
import { loadIdentityTokens } from './auth/identity-tokens.js'
import { loadConfig, type Config } from './config.js'
import { createKeyring, loadMasterKey } from './keys/keyring.js'
import { sealPlaintextSecrets } from './keys/webhook-secrets.js'
import { createAuditTrail } from './domain/audit/audit.js'
import { adoptUnkeyedTrail } from './domain/audit/audit-adoption.js'
import { loadAuditKeys } from './domain/audit/audit-keys.js'
import { createRateLimiter } from './auth/rate-limit.js'
import { createEnrollmentSignals } from './domain/enrollment/enrollment-signals.js'
import { createCalibrator } from './domain/accuracy/calibrator.js'
import { createGalleries } from './domain/galleries/galleries.js'
import { applyErasureLedger, ensureErasureLedger } from './domain/members/erasures.js'
import { createClusterNode, type ClusterNode } from './cluster/node.js'
import { createScatter } from './cluster/scatter.js'
import { createPeerVerifier, peerSigningKey } from './cluster/peer-signature.js'
import { clusterRoutes } from './http/routes/cluster.js'
import { availableBackends, loadNativeAddon } from '@palmvein/matcher/backend'
import { createScanRecorder } from './domain/identification/scans.js'
import { routeTable } from './http/routes/index.js'
import type { Route } from './http/route.js'
import { consoleRoutes } from './http/routes/console.js'
import { loadTls, readPem, type TlsMaterial } from './http/adapters/tls.js'
import { consoleBanner, loadConsoleAssets } from './http/console/assets.js'
import { createHttpServer, type HttpServer } from './http/server.js'
import { bootAnswers } from './http/boot-answers.js'
import { createBootDatabaseWait, type BootDatabaseWait } from './store/engine/boot-database-wait.js'
import { createLogger } from './log.js'
import { openDatabase, type Database } from './store/engine/database.js'
import { migrate } from './store/migrate.js'
import { VERSION } from './version.js'
import { createWebhookEngine } from './webhooks/index.js'
import { openMetricsListener } from './metrics/listener.js'
import { createMetrics, disabledMetrics, type ServiceMetrics } from './metrics/metrics.js'
import { createTrafficWindow } from './metrics/traffic-window.js'
import { createPeerClient } from './cluster/peer-client.js'
import { observeQueries } from './store/engine/query-timing.js'
import { galleryHealthCheck } from './domain/galleries/gallery-health.js'
import type { GalleryState } from './domain/galleries/galleries-api.js'
import { countPendingDeliveries } from './store/webhook-deliveries.js'
import { watchIdleMemory } from './runtime/idle-memory-release.js'

/** Boot log line: what the matcher can run on here, before any gallery exists. */
function describeMatcherBackends(choice: string): string {
  const native = loadNativeAddon()
  const isa = native.ok ? ` (native ISA ${native.value.activeIsa()} of ${native.value.availableIsas().join(', ')})` : ''
  return `backend ${choice}; available ${availableBackends().join(', ')}${isa}`
}

const everyInterface = (host: string) => host === '0.0.0.0' || host === '::'
const hostUrl = (scheme: string, host: string, port: number) => `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`

/** Where a listener on `host` is reached from this machine. */
function urlOf(scheme: string, host: string, port: number): string {
  return hostUrl(scheme, everyInterface(host) ? '127.0.0.1' : host, port)
}

/** The address the socket is bound to, and where this machine reaches it when that differs (boot log). */
function boundAddress(scheme: string, host: string, port: number): string {
  return everyInterface(host) ? `${hostUrl(scheme, host, port)} (every interface; from this machine ${urlOf(scheme, host, port)})` : hostUrl(scheme, host, port)
}

export interface Service {
  url: string
  port: number
  /** The node-to-node listener (cluster mode with PALMVEIN_PEER_PORT), or null. */
  peerUrl: string | null
  /** Where Prometheus scrapes (config.metrics), or null when it is off. */
  metricsUrl: string | null
  app: AppContext
  /** Graceful: stop accepting, answer requests in flight, stop workers, close the database. */
  close(): Promise<void>
}

export interface StartOptions {
  config?: Partial<Config>
  log?: Logger
}

export async function start(options: StartOptions = {}): Promise<Service> {
  const config = loadConfig(options.config)
  const log = options.log ?? createLogger(config)
  const stops: Stops = []
  let http: HttpServer | null = null
  let shuttingDown: () => void = () => {}
  // Once: among the stops when the boot completed, after them when it failed.
  let httpClosing: Promise<void> | null = null
  const stopHttp = () =>
    (httpClosing ??= (async () => {
      shuttingDown()
      await http?.close()
    })())
  try {
    log.info(`palmvein ${VERSION} starting`)
    // Listening before the database answers: /healthz says why the boot waits (boot-answers.ts).
    const tls = loadTlsOrWarn(config, log)
    http = createHttpServer(config.httpServer, tls)
    log.info(`HTTP: ${http.describe}`)
    let wait: BootDatabaseWait | null = null
    const port = await http.listen(
      config.host,
      config.port,
      bootAnswers(() => wait?.waiting() ?? 'starting', log),
    )
    const url = urlOf(tls ? 'https' : 'http', config.host, port)
    const bound = boundAddress(tls ? 'https' : 'http', config.host, port)
    log.info(`HTTP: bound to ${bound}; /healthz answers 503 until the service is ready`)

    const db = await openDatabase(config, { log, exclusive: true, watchAvailability: true })
    stops.push(() => db.close())
    wait = createBootDatabaseWait(db, log)
    const { untilDatabase } = wait
    await migrateAtBoot(db, untilDatabase, log)
    // Read when scraped: the galleries exist by the time the listener opens.
    const metrics = serviceMetrics(config, db, () => services.app.galleries.states(), stops)

    const { master, tokens } = await loadCredentials(config, log)
    const services = await startServices({ config, db, log, metrics, masterKey: master.key, untilDatabase, stops })
    const { clusterNode } = services
    const app = appContext({ config, db, log, tokens, metrics, services })
    await startLoadingGalleries(app, untilDatabase)

    const describeHttp = http.describe
    app.health.push({ name: 'http', critical: false, check: async () => describeHttp })
    shuttingDown = () => {
      app.shuttingDown = true
    }
    // Node-to-node routes: on the public port, or on the peer listener alone (PALMVEIN_PEER_PORT).
    const peerRoutes = config.cluster ? clusterRoutes(createPeerVerifier(peerSigningKey(config.cluster.secret), config.cluster.replayWindowMs)) : []
    const peerListener = config.cluster?.peerListener ?? null
    const consoleAssets = loadConsoleAssets(config.consoleDir)
    // The web console's files and sign-in: served beside the API, not part of it (nor of its OpenAPI document).
    http.serve(app, [...routeTable(VERSION, peerListener ? [] : peerRoutes), ...consoleRoutes(consoleAssets)])
    stops.push(stopHttp)
    if (config.idleMemoryReleaseMs > 0) stops.push(releaseMemoryWhenQuiet(app, http, config.idleMemoryReleaseMs))
    log.info(`HTTP: listening on ${bound}`)
    log.info(consoleBanner(url, consoleAssets))
    const peerUrl = peerListener ? await listenForPeers(app, peerListener, peerRoutes, tls, stops) : null
    if (clusterNode) await joinCluster(app, clusterNode, untilDatabase, stops)
    const metricsUrl = await openMetrics(app, metrics, config.metrics, stops)
    return { url, port, peerUrl, metricsUrl, app, close: closeOnce(stops, log) }
  } catch (error) {
    await stopHttp().catch(() => {})
    for (const stop of stops.reverse()) await stop().catch(() => {})
    throw error
  }
}

type Stops = Array<() => Promise<void>>

/** The TLS material when configured; without it in production, a warning that something in front must terminate TLS. */
function loadTlsOrWarn(config: Config, log: Logger): TlsMaterial | undefined {
  const tls = config.tls ? loadTls(config.tls) : undefined
  if (!tls && config.nodeEnv === 'production') {
    log.warn('HTTP: NODE_ENV=production without TLS: terminate TLS 1.3 in front of the service, or set PALMVEIN_TLS_CERT_FILE and PALMVEIN_TLS_KEY_FILE')
  }
  return tls
}

async function startLoadingGalleries(app: AppContext, untilDatabase: BootDatabaseWait['untilDatabase']): Promise<void> {
  const { galleries } = app
  // Before any gallery loads: members a restored backup brought back after their erasure go again.
  await ensureErasureLedger(app.config)
  await untilDatabase('erasure ledger', () => applyErasureLedger(app, (environmentId, memberId) => galleries.announce(environmentId, memberId)))
  // Registers every environment as loading (identify answers 503 for it), then loads in the background.
  await untilDatabase('galleries', () => galleries.startLoading())
}

/** Registers this node once peers can reach it; it leaves the cluster first on shutdown (stops run in reverse). */
async function joinCluster(app: AppContext, clusterNode: ClusterNode, untilDatabase: BootDatabaseWait['untilDatabase'], stops: Stops): Promise<void> {
  await untilDatabase('cluster registration', () => clusterNode.start(app.galleries))
  stops.push(() => clusterNode.close())
  app.health.push(clusterNode.health)
}

/** Gives memory back while nothing happens (idle-memory-release.ts); returns the stop. */
function releaseMemoryWhenQuiet(app: AppContext, http: HttpServer, intervalMs: number): () => Promise<void> {
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20)
  const stop = watchIdleMemory({
    intervalMs,
    requests: () => http.requests(),
    busy: () => app.galleries.states().some((state) => state.loading),
    releaseElsewhere: app.db.releaseGarbage,
    onRelease: (before, after) => app.log.info({ rss_before_mib: mib(before), rss_after_mib: mib(after) }, 'Memory: quiet, garbage released'),
  })
  return async () => stop()
}

/** The service's close: runs the stops in reverse order, once however often it is called. */
function closeOnce(stops: Stops, log: Logger): () => Promise<void> {
  let closing: Promise<void> | null = null
  return () => {
    closing ??= (async () => {
      for (const stop of stops.reverse()) await stop()
      log.info('stopped')
    })()
    return closing
  }
}

/** The service's long-lived parts below HTTP, each with its stop pushed where the reverse order needs it. */
async function startServices(boot: {
  config: Config
  db: Database
  log: Logger
  metrics: ServiceMetrics
  masterKey: Buffer
  untilDatabase: BootDatabaseWait['untilDatabase']
  stops: Stops
}) {
  const { config, db, log, metrics, untilDatabase, stops } = boot
  const apiKeyUsage = createApiKeyUsage(db.sql, (error) => log.warn({ err: error }, 'last_used_at update failed'))
  stops.push(() => apiKeyUsage.flush())
  const deviceAuthUsage = createDeviceAuthUsage(db.sql, (error) => log.warn({ err: error }, 'device last_auth_at update failed'))
  stops.push(() => deviceAuthUsage.flush())
  // Unused leased requests go back to the shared counters after the HTTP server has stopped.
  const rateLimiter = createRateLimiter(db.sql)
  stops.push(() => rateLimiter.release())
  const enrollmentSignals = await untilDatabase('enrollment signals', () =>
    createEnrollmentSignals(db, (error) => log.warn({ err: error }, 'enrollment session signal failed')),
  )
  stops.push(() => enrollmentSignals.stop())
  const keyring = createKeyring(boot.masterKey)
  await untilDatabase('master keys', () => keyring.refreshMasterKeys(db.sql))
  // Galleries close after the HTTP server and the scan writer (stops run in reverse).
  // Cluster mode: searches reach every shard's holder (scatter.ts); this node's share is its peers' to ask.
  const clusterNode = config.cluster ? createClusterNode({ cluster: config.cluster, sql: db.sql, log }) : null
  const distribution =
    clusterNode && config.cluster
      ? createScatter({
          directory: clusterNode,
          hedgeMs: config.cluster.hedgeMs,
          log,
          peer: peerOptions(config.cluster),
          searchHere: (...search) => galleries.searchShards(...search),
        })
      : undefined
  if (distribution) stops.push(() => distribution.close())
  // The operator API's calls to peers (their traffic), apart from the searches' pools.
  const peers = config.cluster ? createPeerClient(peerOptions(config.cluster)) : null
  if (peers) stops.push(() => peers.close())
  const galleries = createGalleries({ config, db, keyring, log, onScan: metrics.scan, distribution })
  log.info(`Matcher: ${describeMatcherBackends(config.matcherBackend)}, ${config.matcherThreads} thread(s)`)
  stops.push(() => galleries.close())
  const scans = createScanRecorder(db.sql, log)
  stops.push(() => scans.close())
  // Flushed after the HTTP server has stopped (stops run in reverse): no request's record is lost.
  const auditKeys = await untilDatabase('audit keys', () => loadAuditKeys(db.sql, keyring, boot.masterKey, { register: true }))
  const adopted = await untilDatabase('audit trail adoption', () => adoptUnkeyedTrail(db.sql, auditKeys))
  if (adopted.length > 0) log.info(`Audit: adopted ${adopted.length} chain(s) written before the trail was keyed (a signed checkpoint at the end of each)`)
  const audit = createAuditTrail({ sql: db.sql, log, keys: auditKeys, retentionDays: config.auditRetentionDays, purge: true })
  stops.push(() => audit.close())
  // The worker stops after the HTTP server (stops run in reverse) and waits for attempts in flight.
  const webhooks = createWebhookEngine({ db, config, keyring, logger: log.child({ component: 'webhooks' }), onAttempt: metrics.webhookAttempt })
  const sealed = await untilDatabase('webhook secrets', () => sealPlaintextSecrets(db.sql, webhooks.secrets))
  if (sealed > 0) log.info(`Webhooks: sealed ${sealed} secret(s) stored in plaintext by an earlier version`)
  if (config.webhookWorker) {
    await untilDatabase('webhook worker', () => webhooks.start())
    stops.push(() => webhooks.stop())
  }
  log.info(`Webhooks: worker ${config.webhookWorker ? 'on' : 'off'}${config.webhookAllowLocalhost ? ', localhost allowed' : ''}`)
  // Stops before the galleries it searches (stops run in reverse).
  const calibrator = createCalibrator({ config, sql: db.sql, galleries, keyring, log })
  stops.push(() => calibrator.close())
  return {
    clusterNode,
    peers,
    app: { enrollmentSignals, galleries, scans, webhooks, audit, keyring, calibrator, apiKeyUsage, deviceAuthUsage, rateLimiter },
  }
}

/** Node-to-node routes on a listener of their own (PALMVEIN_PEER_PORT); returns its URL. */
async function listenForPeers(
  app: AppContext,
  listener: { host: string; port: number },
  routes: Route[],
  tls: TlsMaterial | undefined,
  stops: Stops,
): Promise<string> {
  const peerHttp = createHttpServer(app.config.httpServer, tls)
  const peerPort = await peerHttp.listen(
    listener.host,
    listener.port,
    bootAnswers(() => 'starting', app.log),
  )
  peerHttp.serve(app, routes)
  stops.push(() => peerHttp.close())
  const peerUrl = urlOf(tls ? 'https' : 'http', listener.host, peerPort)
  app.log.info(`Cluster: node-to-node calls on ${peerUrl} only (PALMVEIN_PEER_PORT)`)
  return peerUrl
}

/** The Prometheus listener; a port that cannot be opened is a non-critical /healthz failure, not a failed boot. */
async function openMetrics(app: AppContext, metrics: ServiceMetrics, listen: Config['metrics'], stops: Stops): Promise<string | null> {
  if (!listen) {
    app.log.info('Metrics: off (PALMVEIN_METRICS_PORT=0)')
    return null
  }
  const opened = await openMetricsListener(metrics.registry, listen, app.log)
  if ('failure' in opened) {
    app.health.push({
      name: 'metrics',
      critical: false,
      check: async () => {
        throw new Error(opened.failure)
      },
    })
    return null
  }
  stops.push(() => opened.close())
  return opened.url
}

/** How this node signs and reaches its peers (its searches and the operator API's calls alike). */
function peerOptions(cluster: NonNullable<Config['cluster']>) {
  return { secret: cluster.secret, ca: cluster.peerCaFile ? readPem('PALMVEIN_PEER_CA_FILE', cluster.peerCaFile) : undefined }
}

async function loadCredentials(config: Config, log: Logger) {
  const master = await loadMasterKey(config)
  const tokens = await loadIdentityTokens(config)
  log.info(
    `Auth: identity tokens from ${tokens.describe}; master key from ${master.source === 'PALMVEIN_MASTER_KEY' ? 'PALMVEIN_MASTER_KEY' : 'the data directory'}`,
  )
  return { master, tokens }
}

async function migrateAtBoot(db: Database, untilDatabase: BootDatabaseWait['untilDatabase'], log: Logger): Promise<void> {
  log.info(`DB: ${db.describe}`)
  const applied = await untilDatabase('migrations', () => migrate(db.sql, (message) => log.info(`DB: ${message}`)))
  if (!applied.length) log.info('DB: schema up to date')
}

function serviceMetrics(config: Config, db: Database, galleries: () => GalleryState[], stops: Stops): ServiceMetrics {
  if (!config.metrics) return disabledMetrics()
  const metrics = createMetrics({ galleries, pendingDeliveries: () => countPendingDeliveries(db.sql) })
  const unobserve = observeQueries(db.sql, metrics.dbQuery)
  stops.push(async () => unobserve())
  return metrics
}

function appContext(parts: {
  config: Config
  db: Database
  log: Logger
  tokens: AppContext['tokens']
  metrics: ServiceMetrics
  services: Awaited<ReturnType<typeof startServices>>
}): AppContext {
  const { config, db, log, tokens, metrics, services } = parts
  const cluster = services.clusterNode
  return {
    config,
    db,
    sql: db.sql,
    log,
    tokens,
    metrics,
    ...services.app,
    apiKeys: createApiKeyLookup(db),
    deviceTokens: createDeviceTokenLookup(db),
    health: [{ name: 'database', critical: true, check: () => db.health() }, galleryHealthCheck(services.app.galleries)],
    traffic: createTrafficWindow(),
    ...(cluster ? { cluster, clusterNode: cluster } : {}),
    ...(services.peers ? { peers: services.peers } : {}),
    shuttingDown: false,
  }
}
