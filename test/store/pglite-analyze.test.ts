// The embedded database's stand-in for autoanalyze (store/engine/pglite-analyze.ts): a table that grew
// since its statistics were taken is analyzed, so the planner's row estimate is the real one; a
// table that did not grow is left alone.
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyzeGrownTables } from '../../src/store/engine/pglite-analyze.js'

const PROJECT = '11111111-1111-4111-8111-111111111111'
const NEWEST = `SELECT id FROM scans WHERE project_id = '${PROJECT}' AND created_at <= now() ORDER BY created_at DESC, id DESC LIMIT 20`

async function estimatedRows(db: PGlite): Promise<number> {
  const { rows } = await db.query<{ 'QUERY PLAN': { Plan: { Plans?: { 'Plan Rows': number }[] } }[] }>(`EXPLAIN (FORMAT JSON) ${NEWEST}`)
  // Limit -> (Sort or Index Scan ...): the estimate of the rows under the limit.
  return rows[0]['QUERY PLAN'][0].Plan.Plans![0]['Plan Rows']
}

describe('analyzeGrownTables', () => {
  let db: PGlite
  beforeAll(async () => {
    db = await PGlite.create()
    await db.exec(`CREATE TABLE scans (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), project_id uuid NOT NULL, created_at timestamptz NOT NULL);
      CREATE INDEX scans_project_created ON scans (project_id, created_at DESC);
      CREATE TABLE quiet (id int PRIMARY KEY)`)
  })
  afterAll(async () => {
    await db.close()
  })

  it('analyzes a table that grew, so the planner sees its real size, and leaves it alone until it grows again', async () => {
    await db.query(`INSERT INTO scans (project_id, created_at) SELECT $1, now() - g * interval '1 ms' FROM generate_series(1, 50000) g`, [PROJECT])
    // Never analyzed: the planner guesses a handful of rows and sorts all 50 000 for a page of 20.
    expect(await estimatedRows(db)).toBeLessThan(1000)
    expect(await analyzeGrownTables(db)).toEqual(['scans'])
    expect(await estimatedRows(db)).toBeGreaterThan(40_000)
    expect(await analyzeGrownTables(db)).toEqual([])
    await db.query(`INSERT INTO scans (project_id, created_at) SELECT $1, now() - g * interval '1 ms' FROM generate_series(1, 50000) g`, [PROJECT])
    expect(await analyzeGrownTables(db)).toEqual(['scans'])
    expect(await estimatedRows(db)).toBeGreaterThan(90_000)
  })
})

describe('PgliteServer.whenIdle', () => {
  it("runs maintenance between units, never inside a client's open transaction", async () => {
    const { PgliteServer } = await import('../../src/store/engine/pglite-server.js')
    const { createClient } = await import('../../src/store/engine/database.js')
    const db = await PGlite.create()
    const server = new PgliteServer(db, 'secret')
    const port = await server.listen('127.0.0.1')
    const sql = createClient({ host: '127.0.0.1', port, password: 'secret', max: 2 })
    try {
      const events: string[] = []
      let releaseTransaction!: () => void
      const held = new Promise<void>((resolve) => {
        releaseTransaction = resolve
      })
      const transaction = sql.begin(async (tx) => {
        await tx`SELECT 1`
        events.push('transaction open')
        await held
        events.push('transaction ending')
      })
      while (!events.includes('transaction open')) await new Promise((resolve) => setTimeout(resolve, 5))
      const maintenance = server.whenIdle(async () => {
        await db.query('SELECT 1')
        events.push('maintenance')
      })
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(events).toEqual(['transaction open'])
      releaseTransaction()
      await transaction
      await maintenance
      expect(events).toEqual(['transaction open', 'transaction ending', 'maintenance'])
    } finally {
      await sql.end({ timeout: 1 })
      await server.close()
      await db.close()
    }
  })
})

describe('analyzeGrownTables on the server', () => {
  it("analyzes each grown table as a unit of its own, so a client's statement runs between two tables", async () => {
    const { PgliteServer } = await import('../../src/store/engine/pglite-server.js')
    const { createClient } = await import('../../src/store/engine/database.js')
    const db = await PGlite.create()
    await db.exec(`CREATE TABLE first_grown (id int); CREATE TABLE second_grown (id int); CREATE SEQUENCE steps;
      INSERT INTO first_grown SELECT g FROM generate_series(1, 20000) g; INSERT INTO second_grown SELECT g FROM generate_series(1, 20000) g`)
    const server = new PgliteServer(db, 'secret')
    const port = await server.listen('127.0.0.1')
    const sql = createClient({ host: '127.0.0.1', port, password: 'secret', max: 1 })
    try {
      await sql`SELECT 1`
      // Each piece and the client's statement take the next number of one sequence as they run.
      const step = async (run: () => Promise<unknown>) => Number(((await run()) as { rows: { n: string }[] }).rows[0].n)
      const pieceSteps: number[] = []
      let client: Promise<number> | undefined
      const analyzed = await analyzeGrownTables(db, (task) =>
        server.whenIdle(async () => {
          if (pieceSteps.length === 1) {
            // A client's statement arrives while the first table is being analyzed.
            client = step(async () => ({ rows: await sql<{ n: string }[]>`SELECT nextval('steps') AS n` }))
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
          const result = await task()
          pieceSteps.push(await step(() => db.query(`SELECT nextval('steps') AS n`)))
          return result
        }),
      )
      expect(analyzed).toEqual(['first_grown', 'second_grown'])
      // The list, the first table, then the client's statement, then the second table.
      const clientStep = await client!
      expect(pieceSteps).toHaveLength(3)
      expect(clientStep).toBeGreaterThan(pieceSteps[1])
      expect(clientStep).toBeLessThan(pieceSteps[2])
    } finally {
      await sql.end({ timeout: 1 })
      await server.close()
      await db.close()
    }
  })

  it('analyzes the tables that grew while no service ran when the embedded database opens', async () => {
    const os = await import('node:os')
    const path = await import('node:path')
    const fs = await import('node:fs/promises')
    const { openDatabase } = await import('../../src/store/engine/database.js')
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-analyze-'))
    try {
      // Written straight into the data directory (as an import or a restore would), never analyzed.
      const files = await PGlite.create(path.join(dataDir, 'pglite'))
      await files.exec('CREATE TABLE imported (id int); INSERT INTO imported SELECT g FROM generate_series(1, 30000) g')
      const before = await files.query<{ reltuples: number }>(`SELECT reltuples FROM pg_class WHERE relname = 'imported'`)
      expect(before.rows[0].reltuples).toBeLessThan(0)
      await files.close()
      const database = await openDatabase({ databaseUrl: null, dataDir }, { exclusive: true, max: 1 })
      try {
        const [row] = await database.sql<{ reltuples: number }[]>`SELECT reltuples FROM pg_class WHERE relname = 'imported'`
        expect(row.reltuples).toBeGreaterThan(25_000)
      } finally {
        await database.close()
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  })
})
