// The member and hand of every reference palm of an environment, in reference id order (the
// order a checkpoint's palm numbers refer to), kept as 17 bytes a palm: as an object and strings a
// palm they were some 150 bytes, 0.3 GB of a 2M-palm deduplication's memory.
import type { Hand } from '../../store/templates.js'

export interface ReferenceKeys {
  readonly count: number
  memberId(palm: number): string
  hand(palm: number): Hand
  /** Owners numbered 0.. (one member's palms share one). */
  readonly ownerOf: Int32Array
}

const HANDS: readonly Hand[] = ['left', 'right']

/** Collects keys as they come, palm 0 first; room doubles when `capacity` runs out. */
export function createKeysCollector(capacity: number) {
  let members = Buffer.alloc(16 * Math.max(1, capacity))
  let hands = new Uint8Array(Math.max(1, capacity))
  let count = 0
  return {
    add(memberId: string, hand: Hand): void {
      if (count === hands.length) {
        const grown = hands.length * 2
        members = copyInto(Buffer.alloc(16 * grown), members)
        hands = copyInto(new Uint8Array(grown), hands)
      }
      if (members.write(memberId.replaceAll('-', ''), count * 16, 16, 'hex') !== 16) throw new RangeError(`not a UUID: ${memberId}`)
      hands[count++] = HANDS.indexOf(hand)
    },
    finish(): ReferenceKeys {
      const ids = members
      const handOf = hands
      return { count, memberId: (palm) => readUuid(ids, palm * 16), hand: (palm) => HANDS[handOf[palm]], ownerOf: numberOwners(ids, count) }
    },
  }
}

function copyInto<T extends Uint8Array>(target: T, source: Uint8Array): T {
  target.set(source)
  return target
}

/** Palms sorted by member, runs of one member numbered in turn. */
function numberOwners(members: Uint8Array, count: number): Int32Array {
  const words = new Uint32Array(members.buffer, members.byteOffset, count * 4)
  const order = new Uint32Array(count)
  for (let palm = 0; palm < count; palm++) order[palm] = palm
  const compare = (x: number, y: number) => {
    for (let word = 0; word < 4; word++) {
      const difference = words[x * 4 + word] - words[y * 4 + word]
      if (difference !== 0) return difference
    }
    return 0
  }
  order.sort(compare)
  const ownerOf = new Int32Array(count)
  let owner = -1
  for (let index = 0; index < count; index++) {
    if (index === 0 || compare(order[index - 1], order[index]) !== 0) owner++
    ownerOf[order[index]] = owner
  }
  return ownerOf
}

function readUuid(from: Buffer, offset: number): string {
  const hex = from.toString('hex', offset, offset + 16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
