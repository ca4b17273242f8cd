// A connection that dies under a transaction or a reserved connection fails that work with
// CONNECTION_CLOSED and the process lives on. postgres.js 3.4.9 as published writes the
// transaction's ROLLBACK to a socket it already dropped and throws from a setImmediate, which would
// end the process (vitest reports it as an unhandled error); scripts/patch-postgres.mjs fixes it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type Sql } from '../../src/store/engine/database.js'
import { postgresIsPatched } from '../../src/store/engine/postgres-patch.js'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

describe('a database connection lost mid-transaction', () => {
  let storage: TestStorage
  let proxy: TcpProxy
  let sql: Sql

  beforeAll(async () => {
    storage = await createTestStorage()
    if (storage.databaseUrl) {
      const target = new URL(storage.databaseUrl)
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
      const proxied = new URL(storage.databaseUrl)
      proxied.hostname = '127.0.0.1'
      proxied.port = String(proxy.port)
      sql = createClient({ url: proxied.toString(), max: 2 })
    } else {
      const { port, password } = JSON.parse(await fs.readFile(path.join(storage.dataDir, 'pglite.json'), 'utf8'))
      proxy = await startTcpProxy({ host: '127.0.0.1', port })
      sql = createClient({ host: '127.0.0.1', port: proxy.port, password, max: 2 })
    }
  })
  afterAll(async () => {
    await sql?.end({ timeout: 1 })
    await proxy?.close()
    await storage?.cleanup()
  })

  const cutAndWait = async () => {
    await proxy.set('refuse')
    await new Promise((resolve) => setTimeout(resolve, 100))
    await proxy.set('open')
  }

  it('the installed postgres.js carries the guard', () => {
    expect(postgresIsPatched()).toBe(true)
  })

  it('a transaction whose connection drops rejects with CONNECTION_CLOSED, and the client works again', async () => {
    const outcome = await sql
      .begin(async (tx) => {
        await tx`SELECT 1`
        await cutAndWait()
        return tx`SELECT 2`
      })
      .then(
        () => 'committed',
        (error: { code?: string }) => error.code,
      )
    expect(outcome).toBe('CONNECTION_CLOSED')
    await new Promise((resolve) => setTimeout(resolve, 100))
    const [row] = await sql`SELECT 3 AS three`
    expect(row.three).toBe(3)
  })

  it('a reserved connection that drops rejects its next query with CONNECTION_CLOSED', async () => {
    const reserved = await sql.reserve()
    await reserved`SELECT 1`
    await cutAndWait()
    const outcome = await reserved`SELECT 2`.then(
      () => 'answered',
      (error: { code?: string }) => error.code,
    )
    reserved.release()
    expect(outcome).toBe('CONNECTION_CLOSED')
    // The released connection has no socket: the first query the pool gives it fails (retryable)
    // and puts it back as closed; the pool then reconnects it.
    const answers = []
    for (let attempt = 0; attempt < 4; attempt++)
      answers.push(
        await sql`SELECT 4 AS four`.then(
          ([row]) => row.four,
          (error: { code?: string }) => error.code,
        ),
      )
    expect(answers.filter((answer) => answer === 'CONNECTION_CLOSED').length).toBeLessThanOrEqual(1)
    expect(answers.at(-1)).toBe(4)
    expect(answers.at(-2)).toBe(4)
  })
})
