// The member and hand of every reference palm of an environment, in reference id order (the
// order a checkpoint's palm numbers refer to), kept as 17 bytes a palm: as an object and strings a
// palm they were some 150 bytes, 0.3 GB of a 2M-palm deduplication's memory.
import { uuidText } from '../../ids.js'
import { HANDS } from '../galleries/gallery-rows.js'
import type { Hand } from '../../store/templates.js'

export interface ReferenceKeys {
  readonly count: number
  memberId(palm: number): string
  hand(palm: number): Hand
  /** Owners numbered 0.. (one member's palms share one). */
  readonly ownerOf: Int32Array
}

/** Collects keys a page at a time, palm 0 first; room doubles when `capacity` runs out. */
export function createKeysCollector(capacity: number) {
  let members = Buffer.alloc(16 * Math.max(1, capacity))
  let hands = new Uint8Array(Math.max(1, capacity))
  let count = 0
  return {
    /** A page as the reference reader gives it (ReadPage): member ids of 36 characters and hands ('l' or 'r'), end to end. */
    addPage(memberIds: string, handLetters: string): void {
      const rows = handLetters.length
      // Hex-decoded in one call a page, as a gallery load does (gallery-rows.ts).
      const ids = Buffer.from(memberIds.replaceAll('-', ''), 'hex')
      if (ids.length !== 16 * rows) throw new RangeError('a member id of the page is not a UUID')
      while (count + rows > hands.length) {
        const grown = hands.length * 2
        members = copyInto(Buffer.alloc(16 * grown), members)
        hands = copyInto(new Uint8Array(grown), hands)
      }
      ids.copy(members, 16 * count)
      for (let row = 0; row < rows; row++) hands[count + row] = handLetters[row] === 'l' ? 0 : 1
      count += rows
    },
    finish(): ReferenceKeys {
      const ids = members
      const handOf = hands
      return { count, memberId: (palm) => uuidText(ids, palm * 16), hand: (palm) => HANDS[handOf[palm]], ownerOf: numberOwners(ids, count) }
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
