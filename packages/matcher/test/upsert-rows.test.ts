// Bulk loads (gallery.upsertRows), on every backend that loads here: a gallery filled a page at a
// time answers exact and two-stage searches exactly as one filled by upsert after upsert, with ids
// as strings or as 16 bytes, with the norms and sign bits readRows gave back or computed; an id met
// again keeps its last row; a page with a bad row changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { availableBackends } from '../src/backend.js'
import { createMatcher, type Gallery, type Matcher } from '../src/index.js'
import { randomInt8 } from './brute-force.js'

// Not a multiple of 64 (padded stride and sign bits), and 256 (the service's, word by word).
const DIMENSIONS = [136, 256]
const ROWS = 1_500

const uuidOf = (index: number) => `0190a3b4-0000-7000-8000-${index.toString(16).padStart(12, '0')}`
const bytesOf = (ids: readonly string[]) => Buffer.from(ids.map((id) => id.replaceAll('-', '')).join(''), 'hex')

function packed(dimension: number, from: number, count: number): Int8Array {
  const vectors = new Int8Array(count * dimension)
  for (let index = 0; index < count; index++) vectors.set(randomInt8(from + index + 1, dimension), index * dimension)
  return vectors
}

async function everyAnswer(gallery: Gallery, dimension: number) {
  const probes = Array.from({ length: 12 }, (_, index) => randomInt8(10_000 + index, dimension))
  const answers = []
  for (const mode of ['exact', 'two_stage'] as const) {
    for (const partition of ['left', 'right']) answers.push(await gallery.searchBatch(probes, { k: 7, mode, partition, candidates: 50 }))
  }
  return answers
}

for (const backend of availableBackends()) {
  for (const dimension of DIMENSIONS) {
    describe(`gallery upsertRows (${backend}, d = ${dimension})`, () => {
      let matcher: Matcher
      beforeAll(async () => {
        matcher = await createMatcher({ dimension, threads: 1, backend, chunkRows: 512 })
      })
      afterAll(() => matcher.close())

      const ids = Array.from({ length: ROWS }, (_, index) => uuidOf(index))
      const vectors = packed(dimension, 0, ROWS)
      const row = (index: number) => vectors.subarray(index * dimension, (index + 1) * dimension)
      const partitionOf = (index: number) => (index % 3 === 0 ? 'right' : 'left')

      function oneByOne(): Gallery {
        const gallery = matcher.createGallery({ ids: 'uuid' })
        ids.forEach((id, index) => gallery.upsert(id, row(index), { partition: partitionOf(index) }))
        return gallery
      }

      /** The rows of one partition, in pages of `pageRows`, as upsertRows takes them. */
      function pagesOf(partition: string, pageRows: number) {
        const indexes = ids.map((_, index) => index).filter((index) => partitionOf(index) === partition)
        const pages = []
        for (let at = 0; at < indexes.length; at += pageRows) {
          const slice = indexes.slice(at, at + pageRows)
          const page = new Int8Array(slice.length * dimension)
          slice.forEach((index, position) => page.set(row(index), position * dimension))
          pages.push({ ids: slice.map((index) => ids[index]), vectors: page })
        }
        return pages
      }

      it('answers as upsert after upsert does, ids as strings or bytes', async () => {
        const expected = await everyAnswer(oneByOne(), dimension)
        const asStrings = matcher.createGallery({ ids: 'uuid' })
        const asBytes = matcher.createGallery({ ids: 'uuid' })
        for (const partition of ['left', 'right']) {
          for (const page of pagesOf(partition, 333)) {
            asStrings.upsertRows(page, { partition })
            asBytes.upsertRows({ ids: bytesOf(page.ids), vectors: page.vectors }, { partition })
          }
        }
        expect(asStrings.size).toBe(ROWS)
        expect(asBytes.size).toBe(ROWS)
        expect(await everyAnswer(asStrings, dimension)).toEqual(expected)
        expect(await everyAnswer(asBytes, dimension)).toEqual(expected)
        expect([...asBytes.vector(ids[4])!]).toEqual([...row(4)])
      })

      it('reloads a copy read out with readRows, norms and sign bits given back, to the same answers', async () => {
        const source = oneByOne()
        const expected = await everyAnswer(source, dimension)
        const copy = matcher.createGallery({ ids: 'uuid' })
        for (const partition of source.partitions()) {
          for (let from: number | null = 0; from !== null; ) {
            const page = source.readRows(partition, from, 400)
            copy.upsertRows({ ids: bytesOf(page.ids), vectors: page.vectors, norms: page.norms, signBits: page.signBits }, { partition })
            from = page.next
          }
        }
        expect(copy.size).toBe(source.size)
        expect(await everyAnswer(copy, dimension)).toEqual(expected)
      })

      it('keeps the last row of an id met again, in the gallery or in the page', async () => {
        const gallery = matcher.createGallery({ ids: 'uuid' })
        gallery.upsert(ids[0], row(0), { partition: 'left' })
        // ids[0] again (replacing the stored row), and ids[1] twice in the page: its second row wins.
        const page = new Int8Array(3 * dimension)
        page.set(row(10), 0)
        page.set(row(11), dimension)
        page.set(row(12), 2 * dimension)
        gallery.upsertRows({ ids: [ids[0], ids[1], ids[1]], vectors: page }, { partition: 'left' })
        expect(gallery.size).toBe(2)
        expect(gallery.deadRows).toBe(2)
        expect([...gallery.vector(ids[0])!]).toEqual([...row(10)])
        expect([...gallery.vector(ids[1])!]).toEqual([...row(12)])
        const [hit] = await gallery.search(row(12), { partition: 'left' })
        expect(hit.id).toBe(ids[1])
      })

      it('refuses a page with a bad row, or of the wrong size, and stores none of it', () => {
        const gallery = matcher.createGallery({ ids: 'uuid' })
        const page = packed(dimension, 0, 4)
        const withMinus128 = page.slice()
        withMinus128[3 * dimension + 5] = -128
        const withZeroRow = page.slice()
        withZeroRow.fill(0, 2 * dimension, 3 * dimension)
        const four = ids.slice(0, 4)
        expect(() => gallery.upsertRows({ ids: four, vectors: withMinus128 })).toThrow(/row 3 has a -128 component/)
        expect(() => gallery.upsertRows({ ids: four, vectors: withZeroRow })).toThrow(/row 2 is all zeros/)
        expect(() => gallery.upsertRows({ ids: four, vectors: page.subarray(dimension) })).toThrow(/4 x/)
        expect(() => gallery.upsertRows({ ids: [...ids.slice(0, 3), 'not-a-uuid'], vectors: page })).toThrow(/UUID/)
        expect(() => gallery.upsertRows({ ids: bytesOf(four).subarray(1), vectors: page })).toThrow(/16 bytes each/)
        expect(() => gallery.upsertRows({ ids: four, vectors: page, norms: new Uint32Array(4) })).toThrow(/go together/)
        expect(() => matcher.createGallery().upsertRows({ ids: bytesOf(four), vectors: page })).toThrow(/UUID ids/)
        expect(gallery.size).toBe(0)
        expect(gallery.deadRows).toBe(0)
      })

      it('refuses a page past the memory budget and stores none of it', async () => {
        const small = await createMatcher({ dimension, threads: 0, backend, chunkRows: 512, maxMemoryBytes: 300_000 })
        try {
          const gallery = small.createGallery({ ids: 'uuid' })
          // Three chunks of 512 rows do not fit in 300 kB; one does.
          expect(() => gallery.upsertRows({ ids, vectors })).toThrow(/matcher memory is full/)
          expect(gallery.size).toBe(0)
          gallery.upsertRows({ ids: ids.slice(0, 10), vectors: vectors.subarray(0, 10 * dimension) })
          expect(gallery.size).toBe(10)
        } finally {
          await small.close()
        }
      })
    })
  }
}
