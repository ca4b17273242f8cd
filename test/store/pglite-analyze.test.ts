// The embedded database's stand-in for autoanalyze (store/pglite-analyze.ts): a table that grew
// since its statistics were taken is analyzed, so the planner's row estimate is the real one; a
// table that did not grow is left alone.
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyzeGrownTables } from '../../src/store/pglite-analyze.js'

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
  afterAll(async () => { await db.close() })

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
  it('runs maintenance between units, never inside a client\'s open transaction', async () => {
    const { PgliteServer } = await import('../../src/store/pglite-server.js')
    const { createClient } = await import('../../src/store/database.js')
    const db = await PGlite.create()
    const server = new PgliteServer(db, 'secret')
    const port = await server.listen('127.0.0.1')
    const sql = createClient({ host: '127.0.0.1', port, password: 'secret', max: 2 })
    try {
      const events: string[] = []
      let releaseTransaction!: () => void
      const held = new Promise<void>((resolve) => { releaseTransaction = resolve })
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
