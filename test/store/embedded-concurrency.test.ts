// The embedded server must keep each connection's protocol exchanges whole: concurrent
// transactions and plain queries on many connections never see each other's portals or rows.
// `sql` connects over loopback TCP (as the CLI joining a service does), `other` over the owning
// process's MessageChannel (as the service's own client does); both serve at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type Sql } from '../../src/store/engine/database.js'
import { openEmbedded, type EmbeddedDatabase } from '../../src/store/engine/embedded.js'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

describe('embedded database server (PGlite over loopback TCP and MessageChannel)', () => {
  let dir: string
  let embedded: EmbeddedDatabase
  let sql: Sql
  let other: Sql
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-embedded-'))
    embedded = await openEmbedded(dir)
    sql = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 8 })
    other = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 4, connect: embedded.thread!.connect })
    await sql`CREATE TABLE counter (id int PRIMARY KEY, value int NOT NULL)`
    await sql`INSERT INTO counter VALUES (1, 0)`
  })
  afterAll(async () => {
    await sql.end()
    await other.end()
    await embedded.close()
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('runs transactions and plain queries from many connections without interleaving them', async () => {
    const jobs = Array.from({ length: 90 }, (_, i) => {
      const client = i % 2 ? sql : other
      if (i % 3 === 0) {
        return client.begin(async (tx) => {
          const [row] = await tx<{ value: number }[]>`SELECT value FROM counter WHERE id = 1`
          await tx`UPDATE counter SET value = ${row.value + 1} WHERE id = 1`
          return (await tx<{ n: number }[]>`SELECT ${i}::int AS n`)[0].n
        })
      }
      return client<{ n: number }[]>`SELECT ${i}::int AS n`.then((rows) => rows[0].n)
    })
    expect(await Promise.all(jobs)).toEqual(Array.from({ length: 90 }, (_, i) => i))
    // Read-modify-write inside transactions is serialised: no lost update.
    expect((await sql<{ value: number }[]>`SELECT value FROM counter WHERE id = 1`)[0].value).toBe(30)
  })

  it('rolls back a failed transaction and keeps serving', async () => {
    await expect(
      sql.begin(async (tx) => {
        await tx`UPDATE counter SET value = -1 WHERE id = 1`
        await tx`SELECT * FROM no_such_table`
      }),
    ).rejects.toThrow(/no_such_table/)
    expect((await other<{ value: number }[]>`SELECT value FROM counter WHERE id = 1`)[0].value).toBe(30)
  })

  it.each([
    ['loopback TCP', false],
    ['a MessageChannel', true],
  ])('rolls back the transaction of a connection over %s that disappears', async (_, overPort) => {
    const lonely = createClient({
      host: embedded.host,
      port: embedded.port,
      password: embedded.password,
      max: 1,
      connect: overPort ? embedded.thread!.connect : undefined,
    })
    const stuck = lonely
      .begin(async (tx) => {
        await tx`UPDATE counter SET value = 999 WHERE id = 1`
        await lonely.end({ timeout: 0 })
      })
      .catch(() => 'ended')
    expect(await stuck).toBe('ended')
    expect((await sql<{ value: number }[]>`SELECT value FROM counter WHERE id = 1`)[0].value).toBe(30)
    expect((await other<{ value: number }[]>`SELECT value FROM counter WHERE id = 1`)[0].value).toBe(30)
  })

  it('ends a MessageChannel connection cleanly: its close completes, and the client can connect again', async () => {
    const client = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 1, connect: embedded.thread!.connect })
    expect((await client<{ n: number }[]>`SELECT 7::int AS n`)[0].n).toBe(7)
    // No timeout: end() sends Terminate and waits for the connection's close, which only comes
    // when the server's end of the channel ends too (a hang here fails the test).
    await client.end()
    const again = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 1, connect: embedded.thread!.connect })
    expect((await again<{ n: number }[]>`SELECT 8::int AS n`)[0].n).toBe(8)
    await again.end()
  }, 20_000)
})
