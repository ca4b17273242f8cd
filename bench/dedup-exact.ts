// The exact all-pairs deduplication the cell search is measured against: every palm scanned
// against every palm with the matcher's int8 kernel (2 048 probes per scan task), each probe's
// hits at or above the threshold kept (widened when its 16 best all reach it), best palm pair per
// pair of owners.
import type { PalmPair, PalmRegister } from '../src/domain/dedup/dedup-cells.js'
import type { Matcher } from '@palmvein/matcher'
import { copyGalleryRow, scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'

const BLOCK = 2048

export async function findPairsExhaustively(matcher: Matcher, register: PalmRegister, threshold: number): Promise<PalmPair[]> {
  const { count, dimension } = register
  const gallery = matcher.createGallery({ ids: 'uuid' })
  for (let palm = 0; palm < count; palm++) {
    gallery.upsert(`${palm.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`, register.vector(palm)!)
  }
  const best = new Map<string, PalmPair>()
  const record = (x: number, y: number, score: number) => {
    const [ox, oy] = [register.owner(x), register.owner(y)]
    if (ox === oy) return
    const [a, b] = ox < oy ? [x, y] : [y, x]
    const key = `${Math.min(ox, oy)}/${Math.max(ox, oy)}`
    const seen = best.get(key)
    if (!seen || seen.score < score) best.set(key, { a, b, score, rank: 0 })
  }
  const probes = new Int8Array(BLOCK * dimension)
  const norms = new Uint32Array(BLOCK)
  for (let first = 0; first < count; first += BLOCK) {
    const last = Math.min(count, first + BLOCK)
    for (let palm = first; palm < last; palm++) norms[palm - first] = copyGalleryRow(gallery, palm, probes, (palm - first) * dimension)
    let k = Math.min(16, count)
    let pending = Array.from({ length: last - first }, (_, index) => first + index)
    while (pending.length) {
      const packed = new Int8Array(pending.length * dimension)
      const packedNorms = new Uint32Array(pending.length)
      pending.forEach((palm, index) => {
        packed.set(probes.subarray((palm - first) * dimension, (palm - first + 1) * dimension), index * dimension)
        packedNorms[index] = norms[palm - first]
      })
      const top = await scanRowRangeTopK(gallery, 0, count, packed, packedNorms, k, threshold)
      const wider: number[] = []
      pending.forEach((palm, index) => {
        const lastSlot = (index + 1) * k - 1
        if (k < count && top.rows[lastSlot] >= 0 && top.scores[lastSlot] >= threshold) {
          wider.push(palm)
          return
        }
        for (let slot = index * k; slot <= lastSlot && top.rows[slot] >= 0 && top.scores[slot] >= threshold; slot++) {
          if (top.rows[slot] !== palm) record(palm, top.rows[slot], top.scores[slot])
        }
      })
      if (wider.length && k >= 1023) throw new RangeError('more than 1023 palms match one palm above the threshold')
      pending = wider
      k = Math.min(1023, count, k * 4)
    }
  }
  return [...best.values()].sort((x, y) => y.score - x.score || x.a - y.a || x.b - y.b)
}
