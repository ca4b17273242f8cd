// The embedded server must keep each connection's protocol exchanges whole: concurrent
// transactions and plain queries on many connections never see each other's portals or rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type Sql } from '../../src/store/database.js'
import { openEmbedded, type EmbeddedDatabase } from '../../src/store/embedded.js'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

describe('embedded database server (PGlite over loopback)', () => {
  let dir: string
  let embedded: EmbeddedDatabase
  let sql: Sql
  let other: Sql
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-embedded-'))
    embedded = await openEmbedded(dir)
    sql = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 8 })
    other = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 4 })
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
    await expect(sql.begin(async (tx) => {
      await tx`UPDATE counter SET value = -1 WHERE id = 1`
      await tx`SELECT * FROM no_such_table`
    })).rejects.toThrow(/no_such_table/)
    expect((await other<{ value: number }[]>`SELECT value FROM counter WHERE id = 1`)[0].value).toBe(30)
  })

  it('rolls back the transaction of a connection that disappears', async () => {
    const lonely = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 1 })
    const stuck = lonely.begin(async (tx) => {
      await tx`UPDATE counter SET value = 999 WHERE id = 1`
      await lonely.end({ timeout: 0 })
    }).catch(() => 'ended')
    expect(await stuck).toBe('ended')
    expect((await sql<{ value: number }[]>`SELECT value FROM counter WHERE id = 1`)[0].value).toBe(30)
  })
})
