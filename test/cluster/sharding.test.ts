// The pieces of cluster mode that are pure functions: a member's shard (the same in TypeScript and
// in SQL, so a node reads only its shards' rows), the rendezvous assignment (stable, moving only
// what a joining node wins), and the merge of the shards' top-k (exact).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { replicasFor } from '../../src/cluster/rendezvous.js'
import { mergeHits } from '../../src/cluster/scatter.js'
import { shardOf } from '../../src/domain/galleries/shard-of.js'
import { createTestStorage, type TestStorage } from '../support/database.js'

describe("a member's shard", () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage.cleanup()
  })

  it('is the same in TypeScript and in the database, for every shard count', async () => {
    const ids = Array.from({ length: 200 }, () => randomUUID())
    for (const shards of [1, 2, 3, 7, 64, 1024]) {
      const rows = await storage.db.sql<{ id: string; shard: number }[]>`
        SELECT id::text AS id, palmvein_shard_of(id, ${shards}) AS shard FROM unnest(${ids}::uuid[]) AS id`
      expect(
        rows.map((row) => row.shard),
        `${shards} shards`,
      ).toEqual(rows.map((row) => shardOf(row.id, shards)))
    }
  })

  it('spreads members evenly, and is fixed by the documented hash', () => {
    // md5("00000000-0000-4000-8000-000000000000") starts with the 32 bits below.
    const known = '00000000-0000-4000-8000-000000000000'
    expect(shardOf(known, 1_000_003)).toBe(0x6e9036f9 % 1_000_003)
    const counts = new Array(8).fill(0)
    for (let index = 0; index < 8_000; index++) counts[shardOf(randomUUID(), 8)] += 1
    for (const count of counts) expect(count).toBeGreaterThan(850)
  })
})

describe('rendezvous assignment', () => {
  const nodes = ['node-a', 'node-b', 'node-c', 'node-d']
  const environment = '0190c8a4-1c3e-7c1b-8d2e-123456789abc'

  it('names the same replicas whatever the order of the membership list', () => {
    for (let shard = 0; shard < 64; shard++) {
      expect(replicasFor([...nodes].reverse(), environment, shard, 2)).toEqual(replicasFor(nodes, environment, shard, 2))
    }
  })

  it('gives every node a share, and a joining node takes only shards it wins', () => {
    const before = Array.from({ length: 256 }, (_, shard) => replicasFor(nodes, environment, shard, 2))
    const held = nodes.map((node) => before.filter((replicas) => replicas.includes(node)).length)
    for (const count of held) expect(count).toBeGreaterThan(90) // 128 expected each
    const after = Array.from({ length: 256 }, (_, shard) => replicasFor([...nodes, 'node-e'], environment, shard, 2))
    for (const [shard, replicas] of after.entries()) {
      // Every replica that moved went to the new node; the others kept their place.
      const lost = before[shard].filter((node) => !replicas.includes(node))
      expect(lost.length).toBe(replicas.includes('node-e') ? 1 : 0)
    }
    const moved = after.filter((replicas) => replicas.includes('node-e')).length
    expect(moved).toBeGreaterThan(70) // 2/5 of 256 ≈ 102
    expect(moved).toBeLessThan(140)
  })

  it('asks for fewer replicas when fewer nodes are up', () => {
    expect(replicasFor(['only'], environment, 0, 2)).toEqual(['only'])
    expect(replicasFor([], environment, 0, 2)).toEqual([])
  })
})

describe("merging the shards' answers", () => {
  it('keeps the best k, each row once, equal scores by id then partition', () => {
    const merged = mergeHits(
      [
        [
          { id: 'b', score: 0.9, partition: 'left' },
          { id: 'a', score: 0.5, partition: 'left' },
        ],
        [
          { id: 'c', score: 0.9, partition: 'right' },
          { id: 'b', score: 0.9, partition: 'left' },
          { id: 'b', score: 0.7, partition: 'right' },
        ],
        [],
      ],
      3,
    )
    expect(merged).toEqual([
      { id: 'b', score: 0.9, partition: 'left' },
      { id: 'c', score: 0.9, partition: 'right' },
      { id: 'b', score: 0.7, partition: 'right' },
    ])
  })
})
