// Copying a gallery out a page at a time (readRows): every live row of a partition exactly once
// with its stored vector, removed rows left out, and a compaction between pages announced by `layout`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMatcher, type Matcher } from '../src/index.js'
import { randomInt8 } from './brute-force.js'

const DIMENSION = 64

describe('gallery readRows', () => {
  let matcher: Matcher
  beforeAll(async () => {
    matcher = await createMatcher({ dimension: DIMENSION, threads: 1, backend: 'js' })
  })
  afterAll(() => matcher.close())

  function readAll(gallery: ReturnType<Matcher['createGallery']>, partition: string, pageRows: number) {
    const rows = new Map<string, Int8Array>()
    for (let from: number | null = 0; from !== null; ) {
      const page = gallery.readRows(partition, from, pageRows)
      page.ids.forEach((id, index) => {
        expect(rows.has(id)).toBe(false)
        rows.set(id, page.vectors.slice(index * DIMENSION, (index + 1) * DIMENSION))
      })
      from = page.next
    }
    return rows
  }

  it('pages through the live rows of one partition only, with their vectors', () => {
    const gallery = matcher.createGallery({ ids: 'uuid' })
    const stored = new Map<string, Int8Array>()
    for (let index = 0; index < 500; index++) {
      const id = `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`
      const vector = randomInt8(index + 1, DIMENSION)
      gallery.upsert(id, vector, { partition: index % 3 === 0 ? 'right' : 'left' })
      if (index % 3 !== 0) stored.set(id, vector)
    }
    for (const id of [...stored.keys()].slice(0, 40)) {
      gallery.remove(id)
      stored.delete(id)
    }
    expect(gallery.partitions().sort()).toEqual(['left', 'right'])
    const rows = readAll(gallery, 'left', 37)
    expect([...rows.keys()].sort()).toEqual([...stored.keys()].sort())
    for (const [id, vector] of rows) expect([...vector]).toEqual([...stored.get(id)!])
    expect(gallery.readRows('absent', 0, 10)).toMatchObject({ ids: [], next: null })
  })

  it('says when a compaction moved the rows between two pages', async () => {
    const gallery = matcher.createGallery()
    for (let index = 0; index < 3000; index++) gallery.upsert(`m${index}`, randomInt8(index + 7, DIMENSION))
    const first = gallery.readRows('', 0, 100)
    for (let index = 0; index < 2500; index++) gallery.remove(`m${index}`)
    await gallery.compact()
    const second = gallery.readRows('', first.next!, 100)
    expect(second.layout).not.toBe(first.layout)
    expect(readAll(gallery, '', 64).size).toBe(500)
  })
})
