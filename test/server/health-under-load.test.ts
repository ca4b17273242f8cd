// /healthz answers while the database is busy with slow statements: on the embedded
// database it reads the database thread's state instead of queueing a SELECT 1 behind them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { bootService, type TestService } from '../support/service.js'

describe(`health under a burst of slow SQL (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  beforeAll(async () => {
    svc = await bootService()
  }, 60_000)
  afterAll(async () => {
    await svc.close()
  })

  it('answers /healthz while slow statements run, before the first of them ends, and says the database is busy', async () => {
    const sql = svc.service.app.sql
    // Queued one after another on the embedded database (1.6 s in all: a new connection waits out
    // the statements before it, within the 2 s connect timeout), side by side on PostgreSQL.
    let firstEnded = Infinity
    const burst = Array.from({ length: 4 }, () =>
      sql`SELECT pg_sleep(0.4)`.then(() => {
        firstEnded = Math.min(firstEnded, performance.now())
      }),
    )
    // Let the first statement start.
    await new Promise((resolve) => setTimeout(resolve, 60))
    const response = await fetch(`${svc.url}/healthz`)
    const answered = performance.now()
    const body = await response.text()
    await Promise.all(burst)
    expect(response.status).toBe(200)
    expect(body).toMatch(/database: ok/)
    if (!usingPostgres) expect(body).toMatch(/database: ok \(embedded; a statement running for \d+ ms\)/)
    // Not queued behind them: a health check that waited for the database would answer after.
    expect(answered).toBeLessThan(firstEnded)
  })
})
