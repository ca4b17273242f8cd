// Splitting a gallery's segments into worker tasks, as a table: near-equal row counts, no row lost
// or repeated, a segment cut where a task is full, never more tasks than asked.
import { describe, expect, it } from 'vitest'
import type { Segment } from '../src/kernel.js'
import { splitSegments } from '../src/scan-plan.js'

const segment = (baseRow: number, rowStart: number, rowEnd: number): Segment => ({
  rowsOffset: baseRow * 8,
  normsOffset: baseRow * 4,
  liveOffset: baseRow,
  bitsOffset: baseRow * 2,
  capacity: 100,
  rowStart,
  rowEnd,
  baseRow,
})
/** Each task as its [absolute first row, absolute end row) ranges. */
const ranges = (tasks: Segment[][]) => tasks.map((task) => task.map((part) => [part.baseRow + part.rowStart, part.baseRow + part.rowEnd]))

describe('splitSegments', () => {
  it.each([
    { name: 'one segment, one part', segments: [segment(0, 0, 10)], parts: 1, tasks: [[[0, 10]]] },
    { name: 'one segment in two', segments: [segment(0, 0, 10)], parts: 2, tasks: [[[0, 5]], [[5, 10]]] },
    { name: 'uneven rows: the last task is shorter', segments: [segment(0, 0, 10)], parts: 3, tasks: [[[0, 4]], [[4, 8]], [[8, 10]]] },
    {
      name: 'two chunks in two',
      segments: [segment(0, 0, 100), segment(100, 0, 50)],
      parts: 2,
      tasks: [
        [[0, 75]],
        [
          [75, 100],
          [100, 150],
        ],
      ],
    },
    { name: 'more parts than rows', segments: [segment(0, 0, 2)], parts: 4, tasks: [[[0, 1]], [[1, 2]]] },
    { name: 'zero parts count as one', segments: [segment(0, 0, 3)], parts: 0, tasks: [[[0, 3]]] },
    { name: 'no rows, no tasks', segments: [], parts: 2, tasks: [] },
    { name: 'a segment starting inside its chunk', segments: [segment(100, 10, 30)], parts: 2, tasks: [[[110, 120]], [[120, 130]]] },
  ])('$name', ({ segments, parts, tasks }) => {
    const split = splitSegments(segments, parts)
    expect(ranges(split)).toEqual(tasks)
    // Cut pieces keep their chunk's offsets.
    for (const part of split.flat()) {
      const source = segments.find((candidate) => candidate.baseRow === part.baseRow)!
      expect(part).toMatchObject({ rowsOffset: source.rowsOffset, capacity: source.capacity, baseRow: source.baseRow })
    }
  })
})
