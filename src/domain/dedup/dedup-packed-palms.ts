// Every palm of a register packed end to end in palm order, with its squared norm: what the cell
// search reads: k-means' sample, the palms placed in their cells (dedup-cell-layout.ts), the
// cells' rows (dedup-cell-chunk.ts) and the probes (dedup-cell-search.ts). One copy of the register
// (d bytes a palm) where the cells' gallery held each palm twice; `palmvein dedup` packs the
// environment's palms as it reads them from the database, without a gallery (dedup.ts).
import type { PalmRegister } from './dedup-palms.js'

export interface PackedPalms extends PalmRegister {
  /** 1 for a palm the register holds; a palm gone holds ones (a zero probe would score 0 everywhere) and pairs with nothing. */
  readonly present: Uint8Array
  /** count x dimension, int8. */
  readonly vectors: Int8Array
  readonly norms: Uint32Array
  /** Copies palms `palms` into `out` end to end and their squared norms into `norms`. */
  gather(palms: ArrayLike<number>, out: Int8Array, norms: Uint32Array): void
}

export function isPacked(register: PalmRegister): register is PackedPalms {
  return 'gather' in register
}

/** Packs palms as they come, palm 0 first; room grows by a quarter when `capacity` runs out. */
export function createPalmPacker(dimension: number, capacity: number) {
  let present = new Uint8Array(capacity)
  let vectors = sharedArray(Int8Array, capacity * dimension)
  let norms = sharedArray(Uint32Array, capacity)
  let count = 0
  return {
    /** Adds the next palm (absent: undefined or null). */
    add(vector: Int8Array | null | undefined): void {
      if (count === norms.length) {
        const grown = Math.max(1024, Math.ceil(count * 1.25))
        present = copyInto(new Uint8Array(grown), present)
        vectors = copyInto(sharedArray(Int8Array, grown * dimension), vectors)
        norms = copyInto(sharedArray(Uint32Array, grown), norms)
      }
      const palm = count++
      if (!vector) {
        vectors.fill(1, palm * dimension, (palm + 1) * dimension)
        norms[palm] = dimension
        return
      }
      present[palm] = 1
      vectors.set(vector, palm * dimension)
      let norm = 0
      for (const value of vector) norm += value * value
      norms[palm] = norm
    },
    finish(owner: (palm: number) => number): PackedPalms {
      return packed(dimension, count, present.subarray(0, count), vectors.subarray(0, count * dimension), norms.subarray(0, count), owner)
    },
  }
}

/** Packs a register's palms (a copy; a register packed already is returned as it is). */
export function packPalms(register: PalmRegister): PackedPalms {
  if (isPacked(register)) return register
  const packer = createPalmPacker(register.dimension, register.count)
  for (let palm = 0; palm < register.count; palm++) packer.add(register.vector(palm))
  return packer.finish(register.owner)
}

/**
 * An array in a SharedArrayBuffer: the matcher's pool workers read the palms in place when they
 * probe the cells (@palmvein/matcher/row-range-scan's joinRowRangeGated), not a copy each.
 */
export function sharedArray<T extends Int8Array | Uint8Array | Uint32Array>(
  type: { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number },
  length: number,
): T {
  return new type(new SharedArrayBuffer(length * type.BYTES_PER_ELEMENT))
}

function copyInto<T extends Uint8Array | Int8Array | Uint32Array>(target: T, source: T): T {
  target.set(source)
  return target
}

function packed(dimension: number, count: number, present: Uint8Array, vectors: Int8Array, norms: Uint32Array, owner: (palm: number) => number): PackedPalms {
  // Word by word where every offset allows it: a self-join gathers tens of millions of probes, and a
  // view a palm (subarray) cost more than its copy (gallery-store.ts's copyRows).
  const words = dimension % 4 === 0 && vectors.byteOffset % 4 === 0 ? dimension / 4 : 0
  const source = words ? new Int32Array(vectors.buffer, vectors.byteOffset, count * words) : null
  return {
    count,
    dimension,
    present,
    vectors,
    norms,
    owner,
    vector: (palm) => (present[palm] ? vectors.subarray(palm * dimension, (palm + 1) * dimension) : undefined),
    gather(palms, out, outNorms) {
      const target = source && out.byteOffset % 4 === 0 ? new Int32Array(out.buffer, out.byteOffset, palms.length * words) : null
      for (let index = 0; index < palms.length; index++) {
        const palm = palms[index]
        outNorms[index] = norms[palm]
        if (target && source) {
          const from = palm * words
          const to = index * words
          for (let word = 0; word < words; word++) target[to + word] = source[from + word]
        } else out.set(vectors.subarray(palm * dimension, (palm + 1) * dimension), index * dimension)
      }
    },
  }
}
