// The identify decision as a table: gallery hits (best first) and the environment's threshold and
// margin in, Found / Ambiguous / NotFound out.
import { describe, expect, it } from 'vitest'
import { bestPerMember, decide, rowsForMembers, type GalleryHit } from '../../src/domain/identification/identify-decision.js'

const settings = { match_threshold: 0.8, margin: 0.03 }
const hit = (id: string, score: number, partition = 'left'): GalleryHit => ({ id, score, partition })

describe('decide', () => {
  it.each([
    { name: 'an empty gallery', hits: [], status: 'NotFound', member: null, score: 0, hand: null },
    { name: 'the best below the threshold', hits: [hit('a', 0.79)], status: 'NotFound', member: null, score: 0.79, hand: null },
    { name: 'one member at the threshold', hits: [hit('a', 0.8, 'right')], status: 'Found', member: 'a', score: 0.8, hand: 'right' },
    { name: 'a runner-up below the threshold', hits: [hit('a', 0.9), hit('b', 0.79)], status: 'Found', member: 'a', score: 0.9, hand: 'left' },
    { name: 'a runner-up exactly margin lower', hits: [hit('a', 0.85), hit('b', 0.82)], status: 'Found', member: 'a', score: 0.85, hand: 'left' },
    { name: 'two members within margin', hits: [hit('a', 0.85), hit('b', 0.83)], status: 'Ambiguous', member: null, score: 0.85, hand: null },
    { name: "one member's two hands", hits: [hit('a', 0.9, 'right'), hit('a', 0.89, 'left')], status: 'Found', member: 'a', score: 0.9, hand: 'right' },
    {
      name: "a member's second hand between two members",
      hits: [hit('a', 0.9), hit('a', 0.89, 'right'), hit('b', 0.88)],
      status: 'Ambiguous',
      member: null,
      score: 0.9,
      hand: null,
    },
  ])('$name: $status', ({ hits, status, member, score, hand }) => {
    const decision = decide(hits, settings)
    expect(decision).toMatchObject({ status, member_id: member, match_score: score, hand })
  })
})

describe('bestPerMember', () => {
  it('keeps each member once, with its best row, in the order of the hits', () => {
    expect(bestPerMember([hit('a', 0.9, 'right'), hit('b', 0.8), hit('a', 0.7), hit('c', 0.6, 'right')])).toEqual([
      { member_id: 'a', match_score: 0.9, hand: 'right' },
      { member_id: 'b', match_score: 0.8, hand: 'left' },
      { member_id: 'c', match_score: 0.6, hand: 'right' },
    ])
  })

  it.each([
    [1, 2],
    [5, 10],
    [0, 0],
  ])('%i members need %i gallery rows', (members, rows) => {
    expect(rowsForMembers(members)).toBe(rows)
  })
})
