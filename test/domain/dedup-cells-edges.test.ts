// The cell search at the edges of a register: no palm, one palm, and palms gone (the register says
// undefined for them): a run completes, reports no pair it cannot have, and never pairs a gone palm.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createMatcher, type Matcher } from '@palmvein/matcher'
import { findPairsByCells } from '../../src/domain/dedup/dedup-cells.js'

const DIMENSION = 16
const palm = Int8Array.from({ length: DIMENSION }, (_, component) => component + 1)
let matcher: Matcher
beforeAll(async () => {
  matcher = await createMatcher({ dimension: DIMENSION, threads: 1 })
})
afterAll(() => matcher.close())

it('completes on a register of no palm and of one palm, with no pair', async () => {
  for (const count of [0, 1]) {
    const result = await findPairsByCells(matcher, { count, dimension: DIMENSION, vector: () => palm, owner: (index) => index }, { threshold: 0.8 })
    expect(result).toMatchObject({ complete: true, pairs: [] })
  }
})

it('pairs the palms that are there and never one that has gone', async () => {
  const register = { count: 6, dimension: DIMENSION, vector: (index: number) => (index % 2 ? undefined : palm), owner: (index: number) => index }
  const result = await findPairsByCells(matcher, register, { threshold: 0.8, cells: 2, probes: 2 })
  expect(result.complete).toBe(true)
  expect(result.pairs.map(({ a, b, score }) => ({ a, b, score }))).toEqual([
    { a: 0, b: 2, score: 1 },
    { a: 0, b: 4, score: 1 },
    { a: 2, b: 4, score: 1 },
  ])
})
