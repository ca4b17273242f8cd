// The service's own connections to the embedded database: postgres.js over a MessagePort
// (store/engine/port-socket.ts) into the PGlite server (store/engine/pglite-server.ts), which hands each
// exchange to PGlite in as few calls as it can. Whatever the batching and the transfer of bytes,
// every statement must come back whole: an exchange bigger than a batch, an error inside a
// pipelined exchange, small statements after a huge one (whose bytes postgres.js's write buffer keeps).
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase, type Database } from '../../src/store/engine/database.js'

let dir: string
let db: Database
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-embedded-protocol-'))
  db = await openDatabase({ databaseUrl: null, dataDir: dir }, { exclusive: true, max: 4 })
  await db.sql`CREATE TABLE protocol_rows (id int PRIMARY KEY, body text NOT NULL)`
})
afterAll(async () => {
  await db?.close()
  await fs.rm(dir, { recursive: true, force: true })
})

const body = (id: number) => `row-${id}-`.padEnd(100, String.fromCharCode(97 + (id % 26)))

describe("the embedded database over the service thread's connections", () => {
  it('takes an exchange bigger than one call into PGlite, and many rows in one statement', async () => {
    // A Bind of 1.5 MiB is handed over apart from the Parse before it and the Execute after it.
    const big = Array.from({ length: 1_500_000 / 30 }, (_, index) => `${index}`.padStart(30, '-')).join('')
    await db.sql`INSERT INTO protocol_rows (id, body) VALUES (0, ${big})`
    const [{ length, same }] = await db.sql<{ length: number; same: boolean }[]>`
      SELECT length(body)::int AS length, body = ${big} AS same FROM protocol_rows WHERE id = 0`
    expect(length).toBe(big.length)
    expect(same).toBe(true)
    const rows = Array.from({ length: 3_000 }, (_, index) => ({ id: index + 1, body: body(index + 1) }))
    await db.sql`INSERT INTO protocol_rows ${db.sql(rows, 'id', 'body')}`
    const [{ count }] = await db.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM protocol_rows WHERE id > 0`
    expect(count).toBe(3_000)
    const [row] = await db.sql<{ body: string }[]>`SELECT body FROM protocol_rows WHERE id = 1234`
    expect(row.body).toBe(body(1234))
  })

  it('answers an error inside an exchange and the next statement on the same connection', async () => {
    await db.sql.reserve().then(async (connection) => {
      try {
        await expect(connection`SELECT 1 / ${0}::int AS never`).rejects.toMatchObject({ code: '22012' })
        const [{ ok }] = await connection<{ ok: number }[]>`SELECT ${41}::int + 1 AS ok`
        expect(ok).toBe(42)
      } finally {
        connection.release()
      }
    })
  })

  it('sends small statements whole after a huge one, many at once', async () => {
    const huge = 'h'.repeat(300_000)
    const [{ length }] = await db.sql<{ length: number }[]>`SELECT length(${huge})::int AS length`
    expect(length).toBe(300_000)
    const ids = Array.from({ length: 400 }, (_, index) => ((index * 7919) % 3_000) + 1)
    const bodies = await Promise.all(
      ids.map(async (id) => (await db.sql<{ id: number; body: string }[]>`SELECT id, body FROM protocol_rows WHERE id = ${id}`)[0]),
    )
    bodies.forEach((row, index) => {
      expect(row.id).toBe(ids[index])
      expect(row.body.startsWith(`row-${ids[index]}-`)).toBe(true)
    })
  })
})
