// `palmvein serve` processes whose PostgreSQL goes through a TCP proxy the test stalls while they
// boot: a database refusing connections at start, and a 1.5 s silence at points of the boot
// (before the migrations, in the middle, at the audit keys, during cluster registration). The
// process never exits: it listens at once, says in its log that it waits, answers /healthz 503
// with the reason (and every other request 503 with Retry-After) meanwhile, and serves once the
// database is back.
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { freePort, spawnCli } from '../support/process.js'
import { request } from '../support/service.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

const STALL_MS = 1_500
const SECRET = 'cluster-secret-for-tests-0123456789abcdef'

interface Booting {
  child: ChildProcess
  url: string
  proxy: TcpProxy
  /** Resolves when the proxy went silent on the text it was armed with (boot's `stallWhenSent`). */
  stalled: Promise<void> | null
  output: () => string
  exits: number[]
  until(pattern: RegExp, timeoutMs?: number): Promise<void>
}

describe('a boot waits for its database (PostgreSQL behind a TCP proxy)', () => {
  let storage: TestStorage
  const booted: Booting[] = []
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    for (const { child, proxy } of booted) {
      const exited = new Promise((resolve) => {
        if (child.exitCode !== null) resolve(null)
        else child.once('exit', resolve)
      })
      child.kill('SIGKILL')
      await exited
      await proxy.close()
    }
    await storage.cleanup()
  })

  async function boot(mode: 'open' | 'refuse', env: (port: number) => Record<string, string> = () => ({}), stallWhenSent?: string): Promise<Booting> {
    const target = new URL(storage.databaseUrl!)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    await proxy.set(mode)
    const stalled = stallWhenSent ? proxy.blackholeWhenSent(stallWhenSent) : null
    const proxied = new URL(storage.databaseUrl!)
    proxied.hostname = '127.0.0.1'
    proxied.port = String(proxy.port)
    const port = await freePort()
    const child = spawnCli(['serve'], {
      PALMVEIN_LOG_LEVEL: 'info',
      PALMVEIN_DATA_DIR: storage.dataDir,
      DATABASE_URL: proxied.toString(),
      HOST: '127.0.0.1',
      PORT: String(port),
      PALMVEIN_MATCHER_THREADS: '1',
      ...env(port),
    })
    let output = ''
    const exits: number[] = []
    child.stdout!.on('data', (chunk) => {
      output += chunk
    })
    child.stderr!.on('data', (chunk) => {
      output += chunk
    })
    child.on('exit', (code) => exits.push(code ?? -1))
    const until = async (pattern: RegExp, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs
      while (!pattern.test(output)) {
        if (exits.length) throw new Error(`serve exited with ${exits[0]} before ${pattern}:\n${output.slice(-4000)}`)
        if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${output.slice(-4000)}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    const started = { child, url: `http://127.0.0.1:${port}`, proxy, stalled, output: () => output, exits, until }
    booted.push(started)
    return started
  }

  it('a database refusing connections at start: the boot waits, /healthz says why, and it serves once the database is back', async () => {
    const node = await boot('refuse')
    await node.until(/Boot: waiting for the database/)
    const health = await request(node.url, 'GET', '/healthz')
    expect(health.status).toBe(503)
    expect(health.text).toMatch(/^UNAVAILABLE\nFAIL boot: waiting for the database \(migrations: .+\) since \d+\.\d s$/)
    expectStatus503(await request(node.url, 'GET', '/v1/organizations'))
    expect((await request(node.url, 'GET', '/livez')).status).toBe(200)
    // Down for longer than any connection attempt's limit: still waiting, not exited.
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(node.exits).toEqual([])
    await node.proxy.set('open')
    await node.until(/HTTP: listening on/)
    expect(node.output()).toMatch(/Boot: the database answers again after \d+\.\d s/)
    const ready = await request(node.url, 'GET', '/healthz')
    expect(ready.status, ready.text).toBe(200)
    expect(node.output().match(/Boot: waiting for the database/g)).toHaveLength(1)
  }, 90_000)

  // Each stall starts when the boot logs the line named, or sends the query text named (a step
  // whose queries take less time than a log line takes to reach the test), and lasts STALL_MS (the
  // availability watch gives up on a silent database after 1 s, which used to fail the boot step
  // in flight, or hang its cleanup until the process exited 0).
  const cluster = (port: number) => ({ PALMVEIN_NODE_URL: `http://127.0.0.1:${port}`, PALMVEIN_CLUSTER_SECRET: SECRET, PALMVEIN_NODE_LEASE_MS: '2000' })
  const stalls: Array<[string, RegExp | { sent: string; step: string }, (port: number) => Record<string, string>]> = [
    ['before the migrations', /"DB: PostgreSQL at/, () => ({})],
    ['mid-boot (master keys, signals, webhooks)', /"Auth: identity tokens/, () => ({})],
    ['at the audit keys', { sent: 'INSERT INTO audit_keys', step: 'audit keys' }, () => ({})],
    ['at the audit trail adoption', { sent: 'FROM audit_checkpoints) AS keyed', step: 'audit trail adoption' }, () => ({})],
    ['during cluster registration', /HTTP: listening on/, cluster],
  ]
  it(`a ${STALL_MS / 1000} s stall at ${stalls.length} points of the boot: each process waits it out and serves`, async () => {
    await Promise.all(
      stalls.map(async ([where, when, env]) => {
        const node = await boot('open', env, when instanceof RegExp ? undefined : when.sent)
        if (when instanceof RegExp) {
          await node.until(when)
          await node.proxy.set('blackhole')
        } else await node.stalled
        await new Promise((resolve) => setTimeout(resolve, STALL_MS))
        await node.proxy.set('open')
        await node.until(env === cluster ? /Cluster: node \S+ registered/ : /HTTP: listening on/)
        // Serving: a request that needs the database answers.
        const ready = await untilHealthy(node.url)
        expect(ready.status, `${where}: ${ready.text}\n${node.output().slice(-3000)}`).toBe(200)
        expect(node.exits, where).toEqual([])
        expect(node.output(), where).not.toMatch(/unhandled rejection/)
        // The stall hit the boot (it did not finish its database work before), at the step named.
        expect(node.output(), where).toMatch(/Boot: waiting for the database/)
        if (!(when instanceof RegExp)) expect(node.output(), where).toContain(`; ${when.step}: `)
      }),
    )
  }, 120_000)
})

function expectStatus503(answer: { status: number; body: { code?: string }; headers: Headers }): void {
  expect(answer.status).toBe(503)
  expect(answer.body.code).toBe('database_unavailable')
  expect(answer.headers.get('retry-after')).toBe('2')
}

async function untilHealthy(url: string) {
  const deadline = Date.now() + 30_000
  for (;;) {
    const answer = await request(url, 'GET', '/healthz')
    if (answer.status === 200 || Date.now() > deadline) return answer
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
