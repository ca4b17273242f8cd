import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('configuration', () => {
  it('has documented defaults', () => {
    const config = loadConfig({}, {})
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: null,
      masterKey: null,
      jwksUrl: null,
      jwtPublicKey: null,
      jwtIssuer: 'palmvein-local',
      jwtAudience: 'palmvein',
      webhookAllowLocalhost: false,
      webhookTimeoutMs: 20_000,
      webhookWorker: true,
      nodeEnv: 'development',
      matcherBackend: 'auto',
      exactAuditRate: 0.01,
      // start() inside another program leaves its memory alone; `palmvein serve` sets 10 s (test/server/idle-memory).
      idleMemoryReleaseMs: 0,
      matcherMaxMemoryBytes: null,
      logLevel: 'info',
    })
    expect(config.dataDir).toMatch(/\/data$/)
    expect(config.metrics).toEqual({ host: '127.0.0.1', port: 9464 })
    expect(config.matcherThreads).toBeGreaterThanOrEqual(1)
  })

  it('is in cluster mode only with PALMVEIN_NODE_URL, on PostgreSQL, with a long enough secret', () => {
    expect(loadConfig({}, {}).cluster).toBeNull()
    const env = { DATABASE_URL: 'postgres://db/palmvein', PALMVEIN_NODE_URL: 'http://10.0.0.5:8080/', PALMVEIN_CLUSTER_SECRET: 's'.repeat(32) }
    expect(loadConfig({}, env).cluster).toEqual({
      nodeUrl: 'http://10.0.0.5:8080',
      secret: 's'.repeat(32),
      leaseMs: 10_000,
      replicas: 2,
      memoryBytes: null,
      hedgeMs: 100,
      peerListener: null,
      replayWindowMs: 30_000,
      peerCaFile: null,
    })
    expect(
      loadConfig(
        {},
        { ...env, PALMVEIN_NODE_LEASE_MS: '3000', PALMVEIN_SHARD_REPLICAS: '3', PALMVEIN_NODE_MEMORY_BYTES: String(2 ** 33), PALMVEIN_CLUSTER_HEDGE_MS: '20' },
      ).cluster,
    ).toMatchObject({ leaseMs: 3000, replicas: 3, memoryBytes: 2 ** 33, hedgeMs: 20 })
    expect(() => loadConfig({}, { ...env, PALMVEIN_CLUSTER_SECRET: 's'.repeat(31) })).toThrow(/at least 32 characters/)
    expect(() => loadConfig({}, { ...env, DATABASE_URL: '' })).toThrow(/needs PostgreSQL/)
    expect(() => loadConfig({}, { ...env, PALMVEIN_NODE_URL: 'ftp://x' })).toThrow(/must be an http\(s\) URL/)
    expect(() => loadConfig({}, { ...env, PALMVEIN_SHARD_REPLICAS: '0' })).toThrow(ConfigError)
  })

  it('takes node-to-node calls on PALMVEIN_PEER_PORT when set, with a replay window of PALMVEIN_PEER_REPLAY_WINDOW_MS', () => {
    const env = {
      DATABASE_URL: 'postgres://db/palmvein',
      PALMVEIN_NODE_URL: 'https://10.0.0.5:8443',
      PALMVEIN_CLUSTER_SECRET: 's'.repeat(32),
      HOST: '10.0.0.5',
    }
    expect(
      loadConfig({}, { ...env, PALMVEIN_PEER_PORT: '8443', PALMVEIN_PEER_REPLAY_WINDOW_MS: '5000', PALMVEIN_PEER_CA_FILE: '/etc/palmvein/ca.pem' }).cluster,
    ).toMatchObject({ peerListener: { host: '10.0.0.5', port: 8443 }, replayWindowMs: 5000, peerCaFile: '/etc/palmvein/ca.pem' })
    expect(loadConfig({}, { ...env, PALMVEIN_PEER_PORT: '8443', PALMVEIN_PEER_HOST: '192.168.1.5' }).cluster?.peerListener).toEqual({
      host: '192.168.1.5',
      port: 8443,
    })
    for (const port of ['0', '70000', 'x', '8080']) expect(() => loadConfig({}, { ...env, PALMVEIN_PEER_PORT: port })).toThrow(/PALMVEIN_PEER_PORT must/)
    for (const window of ['999', '300001', '30s'])
      expect(() => loadConfig({}, { ...env, PALMVEIN_PEER_REPLAY_WINDOW_MS: window })).toThrow(/PALMVEIN_PEER_REPLAY_WINDOW_MS must be an integer/)
  })

  it('offers the sandbox plan for self-service unless PALMVEIN_SELF_SERVICE_PLANS lists others, and refuses an unknown plan', () => {
    expect(loadConfig({}, {}).selfServicePlans).toEqual(['sandbox'])
    expect(loadConfig({}, { PALMVEIN_SELF_SERVICE_PLANS: ' sandbox, business,business ' }).selfServicePlans).toEqual(['sandbox', 'business'])
    expect(() => loadConfig({}, { PALMVEIN_SELF_SERVICE_PLANS: 'sandbox,platinum' })).toThrow(
      /PALMVEIN_SELF_SERVICE_PLANS must list some of sandbox, business, enterprise/,
    )
  })

  it('reads the environment and lets explicit overrides win', () => {
    const key = Buffer.alloc(32, 7).toString('base64')
    const config = loadConfig(
      { port: 0 },
      { PORT: '9000', PALMVEIN_MASTER_KEY: key, PALMVEIN_MATCHER_BACKEND: 'wasm', WEBHOOK_ALLOW_LOCALHOST: 'true', PALMVEIN_EXACT_AUDIT_RATE: '0.5' },
    )
    expect(config.exactAuditRate).toBe(0.5)
    expect(config.port).toBe(0)
    expect(config.masterKey?.equals(Buffer.alloc(32, 7))).toBe(true)
    expect(config.matcherBackend).toBe('wasm')
    expect(config.webhookAllowLocalhost).toBe(true)
  })

  it('serves metrics where PALMVEIN_METRICS_HOST and PALMVEIN_METRICS_PORT say, and not at all on port 0', () => {
    expect(loadConfig({}, { PALMVEIN_METRICS_HOST: '10.0.0.5', PALMVEIN_METRICS_PORT: '9100' }).metrics).toEqual({ host: '10.0.0.5', port: 9100 })
    expect(loadConfig({}, { PALMVEIN_METRICS_PORT: '0' }).metrics).toBeNull()
  })

  it.each([
    [{ PORT: '70000' }, /PORT must be an integer between 0 and 65535/],
    [{ PALMVEIN_METRICS_PORT: 'http' }, /PALMVEIN_METRICS_PORT must be an integer between 0 and 65535/],
    [{ PALMVEIN_MASTER_KEY: 'c2hvcnQ=' }, /PALMVEIN_MASTER_KEY must be 32 bytes/],
    [{ PALMVEIN_MATCHER_BACKEND: 'gpu' }, /PALMVEIN_MATCHER_BACKEND must be one of auto, native, wasm, js/],
    [{ WEBHOOK_ALLOW_LOCALHOST: 'maybe' }, /WEBHOOK_ALLOW_LOCALHOST must be true or false/],
    [{ PALMVEIN_MATCHER_MAX_MEMORY: '1000' }, /PALMVEIN_MATCHER_MAX_MEMORY must be an integer between 1048576 and/],
    [{ PALMVEIN_EMBEDDED_SHARED_BUFFERS: '16' }, /PALMVEIN_EMBEDDED_SHARED_BUFFERS must be a size such as 16MB/],
    [{ PALMVEIN_EMBEDDED_SHARED_BUFFERS: '512kB' }, /at least 1MB/],
    [{ PALMVEIN_EXACT_AUDIT_RATE: '1.5' }, /PALMVEIN_EXACT_AUDIT_RATE must be a number from 0 to 1/],
    [{ PALMVEIN_EXACT_AUDIT_RATE: 'often' }, /PALMVEIN_EXACT_AUDIT_RATE must be a number from 0 to 1/],
    [{ WEBHOOK_ALLOW_LOCALHOST: '1', NODE_ENV: 'production' }, /refused when NODE_ENV=production/],
    [{ PALMVEIN_JWKS_URL: 'https://idp.example/jwks', PALMVEIN_JWT_PUBLIC_KEY: 'x' }, /either PALMVEIN_JWKS_URL or PALMVEIN_JWT_PUBLIC_KEY/],
  ])('refuses %o at boot', (env, message) => {
    expect(() => loadConfig({}, env)).toThrow(ConfigError)
    expect(() => loadConfig({}, env)).toThrow(message)
  })
})
