// Binary COPY … TO STDOUT, as a boot reads its reference pages on PostgreSQL: the fields of each
// row, NULLs included, and a connection that serves the next query after a COPY read slowly
// (postgres.js left it stalled when the COPY's end arrived behind a full buffer; the install patches it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyOut, parseCopyFields } from '../../src/store/engine/copy-binary.js'
import { createClient, type Sql } from '../../src/store/engine/database.js'
import { createTestStorage, type TestStorage } from '../support/database.js'

const ROWS = 3_000

describe('binary COPY out', () => {
  let storage: TestStorage
  let sql: Sql
  beforeAll(async () => {
    storage = await createTestStorage()
    // One connection, so the query after a COPY runs on the connection the COPY used.
    sql = storage.databaseUrl ? createClient({ url: storage.databaseUrl, max: 1 }) : storage.db.sql
    await sql`CREATE TABLE copied (id int4, name text, bytes bytea)`
    await sql`INSERT INTO copied SELECT n, 'row ' || n, CASE WHEN n % 7 = 0 THEN NULL ELSE decode(repeat(lpad(to_hex(n % 256), 2, '0'), 300), 'hex') END FROM generate_series(1, ${ROWS}) n`
  })
  afterAll(async () => {
    if (storage?.databaseUrl) await sql?.end({ timeout: 1 })
    await storage?.cleanup()
  })

  it('gives each field of each row where it starts and how long it is, -1 for NULL', async () => {
    const bytes = await copyOut(sql, 'SELECT id, name, bytes FROM copied ORDER BY id')
    const { rows, starts, lengths } = parseCopyFields(bytes, 3)
    expect(rows).toBe(ROWS)
    for (const row of [0, 5, 6, 1234, ROWS - 1]) {
      const id = row + 1
      expect(bytes.readInt32BE(starts[3 * row])).toBe(id)
      expect(bytes.toString('utf8', starts[3 * row + 1], starts[3 * row + 1] + lengths[3 * row + 1])).toBe(`row ${id}`)
      if (id % 7 === 0) expect(lengths[3 * row + 2]).toBe(-1)
      else expect(bytes.subarray(starts[3 * row + 2], starts[3 * row + 2] + lengths[3 * row + 2])).toEqual(Buffer.alloc(300, id % 256))
    }
    expect(() => parseCopyFields(bytes, 2)).toThrow(/3 fields, 2 expected/)
    expect(() => parseCopyFields(Buffer.from('id,name\n'), 2)).toThrow(/not a binary COPY/)
  })

  it('leaves the connection serving queries after COPYs read slowly', async () => {
    for (let round = 0; round < 5; round++) {
      const chunks: Buffer[] = []
      for await (const chunk of await sql.unsafe('COPY (SELECT id, name, bytes FROM copied ORDER BY id) TO STDOUT (FORMAT binary)').readable()) {
        chunks.push(chunk as Buffer)
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
      expect(parseCopyFields(Buffer.concat(chunks), 3).rows).toBe(ROWS)
      const [{ answer }] = await sql<{ answer: number }[]>`SELECT ${round}::int AS answer`
      expect(answer).toBe(round)
    }
  })
})
