// The connection pool's idle queue stays as small as the pool. postgres.js 3.4.9 as published takes an
// idle connection with `shift`, which leaves an empty slot unless the queue empties, then searches
// the queue for it from the start; while other connections stay idle the queue never empties, so it
// grew by a slot per query and every query scanned all of them (scripts/patch-postgres.mjs fixes it).
// The queue is private to the pool: its length is seen by the search itself (Array indexOf).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestStorage, type TestStorage } from '../support/database.js'

const QUERIES = 3_000

describe("the pool's idle queue", () => {
  let storage: TestStorage

  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage?.cleanup()
  })

  it(`does not grow over ${QUERIES} queries while several connections stay idle`, async () => {
    const { sql } = storage.db
    // Four connections open at once, so three are idle while each of the queries below runs.
    await Promise.all(Array.from({ length: 4 }, (_, index) => sql`SELECT ${index}::int AS n`))
    const indexOf = Array.prototype.indexOf
    let longest = 0
    Array.prototype.indexOf = function (this: unknown[], ...args: Parameters<typeof indexOf>) {
      longest = Math.max(longest, this.length)
      return indexOf.apply(this, args)
    }
    let answered = 0
    try {
      for (let query = 0; query < QUERIES; query++) {
        const [row] = await sql`SELECT ${query}::int AS n`
        if (row.n === query) answered++
      }
    } finally {
      Array.prototype.indexOf = indexOf
    }
    expect(answered).toBe(QUERIES)
    expect(longest).toBeGreaterThan(0)
    expect(longest).toBeLessThan(100)
  })
})
