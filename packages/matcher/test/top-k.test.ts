// Merging per-probe top-k lists, as a table: higher score first, equal scores by lower row, rows
// of the merged part offset by its base row, unused slots (-1) last.
import { describe, expect, it } from 'vitest'
import { emptyTopK, mergeTopKInto, type TopK } from '../src/top-k.js'

/** A one-probe list from [row, score] pairs (the rest unused). */
function list(k: number, entries: Array<[number, number]>): TopK {
  const topK = emptyTopK(1, k)
  entries.forEach(([row, score], index) => {
    topK.rows[index] = row
    topK.scores[index] = score
  })
  return topK
}
const entriesOf = (topK: TopK) => [...topK.rows].map((row, index) => [row, topK.scores[index]] as [number, number])

describe('mergeTopKInto', () => {
  it.each([
    {
      name: 'into an empty list',
      into: [],
      part: [
        [3, 0.5],
        [1, 0.4],
      ],
      base: 0,
      k: 3,
      merged: [
        [3, 0.5],
        [1, 0.4],
        [-1, 0],
      ],
    },
    {
      name: 'an empty part',
      into: [[3, 0.5]],
      part: [],
      base: 0,
      k: 2,
      merged: [
        [3, 0.5],
        [-1, 0],
      ],
    },
    {
      name: 'interleaved scores',
      into: [
        [0, 0.9],
        [1, 0.5],
      ],
      part: [
        [0, 0.7],
        [1, 0.1],
      ],
      base: 10,
      k: 3,
      merged: [
        [0, 0.9],
        [10, 0.7],
        [1, 0.5],
      ],
    },
    {
      name: 'equal scores: the lower row first, after the offset',
      into: [[20, 0.5]],
      part: [[5, 0.5]],
      base: 10,
      k: 2,
      merged: [
        [15, 0.5],
        [20, 0.5],
      ],
    },
    {
      name: 'equal scores, the kept row lower',
      into: [[2, 0.5]],
      part: [[5, 0.5]],
      base: 10,
      k: 2,
      merged: [
        [2, 0.5],
        [15, 0.5],
      ],
    },
    {
      name: 'only the best k stay',
      into: [
        [0, 0.2],
        [1, 0.1],
      ],
      part: [
        [0, 0.9],
        [1, 0.8],
      ],
      base: 100,
      k: 2,
      merged: [
        [100, 0.9],
        [101, 0.8],
      ],
    },
  ] as Array<{ name: string; into: Array<[number, number]>; part: Array<[number, number]>; base: number; k: number; merged: Array<[number, number]> }>)(
    '$name',
    ({ into, part, base, k, merged }) => {
      const target = list(k, into)
      mergeTopKInto(target, list(k, part), base)
      expect(entriesOf(target)).toEqual(merged)
    },
  )

  it('merges every probe of a list on its own', () => {
    const into = emptyTopK(2, 2)
    const part = emptyTopK(2, 2)
    into.rows.set([0, -1, 1, -1])
    into.scores.set([0.5, 0, 0.2, 0])
    part.rows.set([0, 1, 0, -1])
    part.scores.set([0.6, 0.1, 0.3, 0])
    mergeTopKInto(into, part, 4)
    expect([...into.rows]).toEqual([4, 0, 4, 1])
    expect([...into.scores]).toEqual([0.6, 0.5, 0.3, 0.2])
  })
})
