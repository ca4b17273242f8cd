// The bench's pgvector peer (bench/pgvector) on a real PostgreSQL with pgvector installed
// (scripts/pgvector-build.sh): its exact query answers as palmvein's exact scan does, and its
// recall and decision agreement see what an approximate index loses. Its own stage
// (`npm run test:pgvector`, with DATABASE_URL), since pgvector is built for it.
import { randomBytes } from 'node:crypto'
import { createMatcher, createSyntheticPopulation } from '@palmvein/matcher'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agreementWithExact, decisionOf, DEFAULT_DECISION } from '../../bench/pgvector/agreement.js'
import { buildIndex, createGalleryTable, loadGallery, pgvectorModes, searchWith } from '../../bench/pgvector/pgvector-gallery.js'
import { scratchDatabase } from '../../bench/service/scratch-database.mjs'
import type { GalleryHit } from '../../src/domain/identification/identify-decision.js'

const DIMENSION = 128
// 2,000 rows: two IVFFlat lists (rows / 1000), so one probe leaves a list unseen.
const MEMBERS = 1000
const ROWS = 2 * MEMBERS
const K = 10
/** Candidates of the binary re-ranking: half the rows (ef_search allows 1,000 at most). */
const CANDIDATES = 1000
const HANDS = ['left', 'right'] as const

describe('agreement with the exact scan', () => {
  const hit = (id: string, score: number, partition = 'left'): GalleryHit => ({ id, score, partition })

  it('counts the exact top-k rows an answer keeps, and whether its identify decision is the same', () => {
    const exact = [
      [hit('a', 0.95), hit('b', 0.4)],
      [hit('c', 0.5), hit('d', 0.3)],
    ]
    // Probe 0 loses its best row (Found a → NotFound); probe 1 keeps both rows, reordered.
    const approximate = [[hit('b', 0.4)], [hit('d', 0.3), hit('c', 0.5)]]
    expect(agreementWithExact(exact, approximate, 2)).toEqual({ probes: 2, recall: 3 / 4, decisionAgreement: 1 / 2 })
  })

  it('tells rows of one member apart by hand, and decides per member as identify does', () => {
    expect(agreementWithExact([[hit('a', 0.9, 'left')]], [[hit('a', 0.9, 'right')]], 1).recall).toBe(0)
    // Two members within the margin above the threshold: Ambiguous, whichever comes first.
    expect(decisionOf([hit('a', 0.9), hit('b', 0.89)], DEFAULT_DECISION)).toBe('Ambiguous')
    expect(decisionOf([hit('a', 0.9), hit('a', 0.89, 'right')], DEFAULT_DECISION)).toBe('Found:a')
  })
})

describe('the pgvector peer on PostgreSQL', () => {
  const serverUrl = process.env.DATABASE_URL
  let database: Awaited<ReturnType<typeof scratchDatabase>>
  let sql: postgres.Sql
  const population = createSyntheticPopulation({ seed: 7, dimension: DIMENSION, identities: MEMBERS + 100 })
  const rows = new Int8Array(ROWS * DIMENSION)
  for (let member = 0; member < MEMBERS; member++)
    HANDS.forEach((hand, side) => rows.set(population.captureInt8(member, hand, 0, 0), (2 * member + side) * DIMENSION))
  // Mated probes (a later session of an enrolled palm) and palms never enrolled.
  const probes = Array.from({ length: 40 }, (_, index) => population.captureInt8(index % 2 === 0 ? index : MEMBERS + index, HANDS[(index >> 1) % 2], 1, index))

  beforeAll(async () => {
    if (!serverUrl) throw new Error('DATABASE_URL must name a PostgreSQL server with pgvector installed (bash scripts/pgvector-build.sh)')
    database = await scratchDatabase(serverUrl, `palmvein_pgvector_test_${randomBytes(4).toString('hex')}`)
    sql = postgres(database.url, { max: 1, onnotice: () => {} })
    await createGalleryTable(sql, 'gallery', DIMENSION)
    await loadGallery(sql, 'gallery', rows, DIMENSION)
  })
  afterAll(async () => {
    await sql?.end({ timeout: 5 })
    await database?.drop()
  })

  const answersOf = async (mode: ReturnType<typeof pgvectorModes>[number]) => {
    const client = postgres(database.url, { max: 1, onnotice: () => {}, connection: mode.settings })
    try {
      const search = searchWith(client, 'gallery', mode, DIMENSION, K)
      const answers: GalleryHit[][] = []
      for (const probe of probes) answers.push(await search(probe))
      return answers
    } finally {
      await client.end({ timeout: 5 })
    }
  }
  const modeNamed = (name: string) => pgvectorModes(ROWS, CANDIDATES).find((mode) => mode.name === name)!

  it("answers exact queries with palmvein's exact rows, scores and decisions", async () => {
    const matcher = await createMatcher({ dimension: DIMENSION, threads: 1 })
    try {
      const gallery = matcher.createGallery()
      for (let row = 0; row < ROWS; row++)
        gallery.upsert(String(row >> 1), rows.subarray(row * DIMENSION, (row + 1) * DIMENSION), { partition: HANDS[row & 1] })
      const palmvein = await Promise.all(probes.map((probe) => gallery.search(probe, { k: K, mode: 'exact' })))
      const exact = await answersOf(modeNamed('exact'))
      expect(agreementWithExact(palmvein, exact, K)).toEqual({ probes: probes.length, recall: 1, decisionAgreement: 1 })
      expect(exact[0][0].score).toBeCloseTo(palmvein[0][0].score, 5)
      // Both kinds of probe are there: the decisions compared are not all NotFound.
      const decisions = exact.map((answer) => decisionOf(answer, DEFAULT_DECISION))
      expect(decisions.filter((decision) => decision.startsWith('Found')).length).toBeGreaterThan(10)
      expect(decisions.filter((decision) => decision === 'NotFound').length).toBeGreaterThan(10)
    } finally {
      await matcher.close()
    }
  })

  it('builds each index with its size, and measures what a one-probe IVFFlat loses against the exact scan', async () => {
    const exact = await answersOf(modeNamed('exact'))
    const ivfflat = await buildIndex(sql, 'gallery', 'ivfflat', { dimension: DIMENSION, rows: ROWS, timeoutSeconds: 60, maintenanceWorkMem: '64MB' })
    expect(ivfflat).toMatchObject({ index: 'ivfflat', bytes: expect.any(Number) })
    expect('bytes' in ivfflat && ivfflat.bytes).toBeGreaterThan(0)
    // One list of several probed: rows in the others are never seen.
    const oneList = agreementWithExact(exact, await answersOf(modeNamed('ivfflat')), K)
    expect(oneList.recall).toBeLessThan(1)
    // Half the rows as candidates of the exact re-ranking: it finds nearly all of the exact rows.
    const binary = await buildIndex(sql, 'gallery', 'binary_hnsw', { dimension: DIMENSION, rows: ROWS, timeoutSeconds: 60, maintenanceWorkMem: '64MB' })
    expect('bytes' in binary && binary.bytes).toBeGreaterThan(0)
    const [{ count }] = await sql`SELECT count(*)::int AS count FROM pg_indexes WHERE tablename = 'gallery' AND indexname LIKE 'gallery_ivfflat'`
    expect(count).toBe(0)
    const reranked = agreementWithExact(exact, await answersOf(modeNamed('binary_rerank')), K)
    expect(reranked.recall).toBeGreaterThan(0.9)
    expect(reranked.recall).toBeGreaterThan(oneList.recall)
  })

  it('says an index build that runs out of time is unfinished, and leaves no index behind', async () => {
    const built = await buildIndex(sql, 'gallery', 'hnsw', { dimension: DIMENSION, rows: ROWS, timeoutSeconds: 0.001, maintenanceWorkMem: '64MB' })
    expect(built).toMatchObject({ index: 'hnsw', unfinished: 'not built within 0.001 s' })
    const [{ count }] = await sql`SELECT count(*)::int AS count FROM pg_indexes WHERE tablename = 'gallery' AND indexname = 'gallery_hnsw'`
    expect(count).toBe(0)
  })
})
