// A command line run on PostgreSQL rides out a database that is slow to answer (a loaded machine):
// only a serving process cuts its connections when a probe goes unanswered for a second (to
// answer 503 at once); `palmvein dedup` has no request to answer, and a late probe ended it with
// "the database is unreachable" on a busy CI machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useCliTenant } from '../support/cli-tenant.js'
import { outputOf, spawnCli } from '../support/process.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

// Longer than the serving process's 1 s probe limit, shorter than a connection attempt's 2 s.
const SLOW_MS = 1_600

describe('a CLI run on a slow PostgreSQL', () => {
  const cli = useCliTenant('slow-database@example.com')
  let proxy: TcpProxy
  beforeAll(async () => {
    const target = new URL(cli.storage.databaseUrl!)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  })
  afterAll(async () => {
    await proxy?.close()
  })

  it('waits for the answers and finishes, where a probe would have cut its connections', async () => {
    const proxied = new URL(cli.storage.databaseUrl!)
    proxied.hostname = '127.0.0.1'
    proxied.port = String(proxy.port)
    await proxy.set('pause')
    const child = spawnCli(['dedup', '--environment', cli.tenant.environmentId, '--exact'], { ...cli.env, DATABASE_URL: proxied.toString() })
    const output = outputOf(child)
    // Every statement of the run's first 1.6 s waits: its migrations, its key ring, and any probe.
    await proxy.firstConnection()
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS))
    await proxy.set('open')
    const result = await output
    expect([result.code, result.stderr]).toEqual([0, expect.stringMatching(/0 pair\(s\) at or above/)])
  }, 60_000)
})
