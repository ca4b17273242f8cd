// /healthz answers at once while the database is busy with slow statements: on the embedded
// database it reads the database thread's state instead of queueing a SELECT 1 behind them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { bootService, type TestService } from '../support/service.js'

describe(`health under a burst of slow SQL (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  beforeAll(async () => { svc = await bootService() }, 60_000)
  afterAll(async () => { await svc.close() })

  it('answers /healthz within 50 ms while slow statements run, and says the database is busy', async () => {
    const sql = svc.service.app.sql
    const burst = Array.from({ length: 4 }, () => sql`SELECT pg_sleep(0.3)`.then(() => undefined))
    // Let the first statement start.
    await new Promise((resolve) => setTimeout(resolve, 60))
    const started = performance.now()
    const response = await fetch(`${svc.url}/healthz`)
    const elapsedMs = performance.now() - started
    const body = await response.text()
    await Promise.all(burst)
    expect(response.status).toBe(200)
    expect(body).toMatch(/database: ok/)
    if (!usingPostgres) expect(body).toMatch(/database: ok \(embedded; a statement running for \d+ ms\)/)
    expect(elapsedMs).toBeLessThan(50)
  })
})
