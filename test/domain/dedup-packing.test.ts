// What the cell search reads a register into: the packed palms (dedup-packed-palms.ts) and the
// members and hands of the palms (dedup-reference-keys.ts), both filled as the rows come and
// regrown when more come than expected.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createPalmPacker, packPalms } from '../../src/domain/dedup/dedup-packed-palms.js'
import { createKeysCollector } from '../../src/domain/dedup/dedup-reference-keys.js'

const DIMENSION = 16

describe('packed palms', () => {
  it('keeps every palm, its norm and whether it is there, past the room it started with', () => {
    const vectors = Array.from({ length: 3_000 }, (_, palm) =>
      palm % 7 === 3 ? null : Int8Array.from({ length: DIMENSION }, (_, component) => ((palm * 31 + component * 17) % 255) - 127),
    )
    const packer = createPalmPacker(DIMENSION, 1)
    for (const vector of vectors) packer.add(vector)
    const palms = packer.finish((palm) => palm >> 1)
    expect(palms.count).toBe(3_000)
    vectors.forEach((vector, palm) => {
      expect(palms.present[palm]).toBe(vector ? 1 : 0)
      expect(palms.vector(palm)).toEqual(vector ?? undefined)
      expect(palms.norms[palm]).toBe(vector ? vector.reduce((sum, value) => sum + value * value, 0) : DIMENSION)
    })
    const out = new Int8Array(3 * DIMENSION)
    const norms = new Uint32Array(3)
    palms.gather([2_998, 0, 1_000], out, norms)
    expect(out).toEqual(Int8Array.from([...vectors[2_998]!, ...vectors[0]!, ...vectors[1_000]!]))
    expect([...norms]).toEqual([palms.norms[2_998], palms.norms[0], palms.norms[1_000]])
    // A register packed already is not copied again.
    expect(packPalms(palms)).toBe(palms)
  })
})

describe('reference keys', () => {
  it('gives back each member id and hand, and numbers the owners so one member owns both hands', () => {
    const members = Array.from({ length: 1_500 }, () => randomUUID())
    const collector = createKeysCollector(1)
    // Two hands a member, interleaved with the others' as reference ids order them.
    const rows = members.flatMap((member, index) => [
      { member, hand: 'left' as const, order: index },
      { member, hand: 'right' as const, order: (index * 7) % members.length },
    ])
    rows.sort((x, y) => x.order - y.order)
    // In pages as the reference reader reads them (member ids and hand letters end to end), of 7 rows.
    for (let first = 0; first < rows.length; first += 7) {
      const page = rows.slice(first, first + 7)
      collector.addPage(page.map((row) => row.member).join(''), page.map((row) => row.hand[0]).join(''))
    }
    const keys = collector.finish()
    expect(keys.count).toBe(rows.length)
    rows.forEach((row, palm) => {
      expect(keys.memberId(palm)).toBe(row.member)
      expect(keys.hand(palm)).toBe(row.hand)
    })
    const ownerOfMember = new Map<string, number>()
    rows.forEach((row, palm) => {
      const owner = keys.ownerOf[palm]
      expect(ownerOfMember.get(row.member) ?? owner).toBe(owner)
      ownerOfMember.set(row.member, owner)
    })
    expect(new Set(ownerOfMember.values()).size).toBe(members.length)
    expect(() => collector.addPage('not-a-uuid', 'l')).toThrow(/not a UUID/)
  })
})
