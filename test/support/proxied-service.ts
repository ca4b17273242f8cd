// A service whose PostgreSQL connections go through a TCP proxy the test can cut (the outage
// stage), with its log lines kept for assertions. Needs DATABASE_URL.
import { Writable } from 'node:stream'
import pino from 'pino'
import { start, type Service } from '../../src/server.js'
import { createTestStorage, type TestStorage } from './database.js'
import { serviceConfig } from './service.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'

export interface ProxiedService {
  storage: TestStorage
  proxy: TcpProxy
  service: Service
  /** Every log line the service wrote, as JSON text. */
  logLines: string[]
  close(): Promise<void>
}

export async function startProxiedService(): Promise<ProxiedService> {
  if (!process.env.DATABASE_URL) throw new Error('the outage stage needs DATABASE_URL (PostgreSQL): npm run test:outage with DATABASE_URL set')
  const storage = await createTestStorage()
  const target = new URL(storage.databaseUrl!)
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  const proxied = new URL(storage.databaseUrl!)
  proxied.hostname = '127.0.0.1'
  proxied.port = String(proxy.port)
  const logLines: string[] = []
  const sink = new Writable({
    write(chunk, _, done) {
      logLines.push(...String(chunk).trim().split('\n'))
      done()
    },
  })
  const service = await start({ config: serviceConfig(storage, { databaseUrl: proxied.toString(), logLevel: 'info' }), log: pino({ level: 'info' }, sink) })
  return {
    storage,
    proxy,
    service,
    logLines,
    async close() {
      // Bounded: a shutdown that hangs after an outage (seen twice in CI, cause not found yet)
      // is reported here rather than failing the outage tests' teardown after 60 s.
      await bounded('service.close()', service.close())
      await bounded('proxy.close()', proxy.close())
      await bounded('storage.cleanup()', storage.cleanup())
    },
  }
}

const STEP_MS = 15_000

async function bounded(step: string, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STEP_MS)
  })
  const outcome = await Promise.race([work.then(() => 'done' as const), late])
  clearTimeout(timer)
  if (outcome === 'late') console.error(`[outage teardown] ${step} did not finish within ${STEP_MS / 1000} s; going on`)
}
