// The id <-> row maps: the compact UUID form behaves exactly like the string form under random
// upserts, removes and compaction moves, and a 'uuid' gallery keeps its ids through compaction.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { availableBackends } from '../src/backend.js'
import { createIdIndex, StringIndex, type IdIndex } from '../src/id-index.js'
import { createMatcher, type Matcher } from '../src/index.js'
import { randomInt8, rankIds } from './brute-force.js'

/** Drives an index like a store does: rows appended, cleared, holes filled by the last rows. */
function drive(index: IdIndex, ids: readonly string[], seed: number): string[] {
  let state = seed
  const next = (bound: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    return (state >>> 8) % bound
  }
  let rows = 0
  const log: string[] = []
  for (let step = 0; step < 4000; step++) {
    const id = ids[next(ids.length)]
    const action = next(10)
    const existing = index.rowOf(id)
    if (action < 3) {
      // Forgotten first: the id is placed as a new one.
      if (existing !== undefined) index.clear(existing)
      expect(index.place(id, rows++)).toBeUndefined()
    } else if (action < 6) {
      // One lookup: the id's old row comes back, forgotten.
      expect(index.place(id, rows++)).toBe(existing)
      if (existing !== undefined) expect(index.isPresent(existing)).toBe(false)
      if (step % 97 === 0) index.reserve(index.size + next(700))
    } else if (action < 9) {
      if (existing !== undefined) index.clear(existing)
    } else {
      // Compaction: the highest present rows move into the lowest holes.
      let hole = 0
      let tail = rows - 1
      while (true) {
        while (hole < rows && index.isPresent(hole)) hole++
        while (tail > hole && !index.isPresent(tail)) tail--
        if (hole >= tail) break
        index.move(tail, hole)
      }
      rows = index.size
      index.truncate(rows)
    }
    log.push(`${index.size}:${ids.map((known) => index.rowOf(known) ?? '-').join(',')}`)
  }
  for (let row = 0; row < rows; row++) if (index.isPresent(row)) expect(index.rowOf(index.idAt(row)!)).toBe(row)
  return log
}

describe('id index', () => {
  it('the uuid form answers exactly as the string form, through growth, reservations, deletes and moves', () => {
    const ids = Array.from({ length: 300 }, () => randomUUID())
    for (const seed of [1, 2, 3]) expect(drive(createIdIndex('uuid'), ids, seed)).toEqual(drive(createIdIndex('string'), ids, seed))
  })

  it("the string form spills past one map's capacity (V8 Maps stop at 2^24 entries) and answers the same", () => {
    const ids = Array.from({ length: 300 }, (_, index) => `member-${index}`)
    const small = new StringIndex(16)
    for (const seed of [1, 2, 3]) expect(drive(new StringIndex(16), ids, seed)).toEqual(drive(createIdIndex('string'), ids, seed))
    for (let row = 0; row < 100; row++) small.place(ids[row], row)
    expect(small.mapCount).toBe(7)
    expect(small.size).toBe(100)
    small.clear(3)
    expect(small.rowOf(ids[3])).toBeUndefined()
    expect(small.rowOf(ids[99])).toBe(99)
  })

  it('the uuid form takes any case, reports lowercase, and refuses what is not a UUID', () => {
    const index = createIdIndex('uuid')
    const id = '0F8FAD5B-D9CB-469F-A165-70867728950E'
    expect(index.normalise(id)).toBe(id.toLowerCase())
    index.place(index.normalise(id), 0)
    expect(index.rowOf(id.toLowerCase())).toBe(0)
    expect(index.rowOf(id)).toBe(0)
    expect(index.idAt(0)).toBe(id.toLowerCase())
    expect(index.rowOf('not-a-uuid')).toBeUndefined()
    for (const bad of ['', 'x', '0f8fad5b-d9cb-469f-a165-70867728950', '0f8fad5bd9cb469fa16570867728950e00', '0f8fad5b-d9cb-469f-a165-70867728950g']) {
      expect(() => index.normalise(bad)).toThrow(TypeError)
    }
    expect(() => createIdIndex('string').normalise('')).toThrow(TypeError)
  })
})

describe.each(availableBackends())('%s gallery with uuid ids', (backend) => {
  let matcher: Matcher
  beforeAll(async () => {
    matcher = await createMatcher({ dimension: 128, threads: 2, backend, chunkRows: 64, inlineBelowRows: 0, maxMemoryBytes: 64 << 20 })
  })
  afterAll(async () => {
    await matcher?.close()
  })

  it('searches like the brute force and keeps every id through removes and compaction', async () => {
    const gallery = matcher.createGallery({ ids: 'uuid' })
    // Room reserved for part of the rows (the rest grow the maps), in the rows without a partition.
    gallery.reserve(300)
    expect(() => gallery.reserve(-1)).toThrow(RangeError)
    const vectors = new Map<string, Int8Array>()
    for (let index = 0; index < 500; index++) {
      const id = randomUUID()
      const vector = randomInt8(index + 1, 128)
      gallery.upsert(index % 3 ? id : id.toUpperCase(), vector)
      vectors.set(id, vector)
    }
    const ids = [...vectors.keys()]
    for (let index = 0; index < 500; index += 2) {
      expect(gallery.remove(ids[index])).toBe(true)
      vectors.delete(ids[index])
    }
    const probes = [randomInt8(7, 128), randomInt8(100, 128), randomInt8(4242, 128)]
    const before = await gallery.searchBatch(probes, { k: 9 })
    probes.forEach((probe, index) => expect(before[index]).toEqual(rankIds(probe, vectors, 9)))
    await gallery.compact()
    expect(gallery.deadRows).toBe(0)
    expect(await gallery.searchBatch(probes, { k: 9 })).toEqual(before)
    for (const id of vectors.keys()) expect(gallery.has(id.toUpperCase())).toBe(true)
    expect(gallery.size).toBe(250)
    // Upserting an id again replaces its row (one lookup finds and moves it).
    gallery.upsert(ids[1], probes[0])
    expect(gallery.size).toBe(250)
    expect(gallery.vector(ids[1])).toEqual(probes[0])
    expect(() => gallery.upsert('member-1', probes[0])).toThrow(/must be a UUID/)
    expect(gallery.has('member-1')).toBe(false)
    expect(() => matcher.createGallery({ ids: 'int' as 'uuid' })).toThrow(RangeError)
  })
})
