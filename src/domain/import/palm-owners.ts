// Who each palm of the import's cell index belongs to: its member's UUID as 16 bytes and its hand
// as one, in typed arrays that grow. Two million palms as strings and array slots made every major
// collection of the import's heap mark four million objects (a quarter of a batch's CPU at 1M
// members went to V8's marking and sweeping).
import { HANDS } from '../galleries/galleries.js'
import type { Hand } from '../../store/templates.js'

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))
/** Where each of a UUID's 16 bytes starts in its text (8-4-4-4-12). */
const BYTE_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]
/** A hex digit's value by character code (-1: not a hex digit). */
const DIGIT = Int8Array.from({ length: 128 }, (_, code) => {
  const value = Number.parseInt(String.fromCharCode(code), 16)
  return Number.isNaN(value) ? -1 : value
})

export class PalmOwners {
  private ids = new Uint8Array(16 * 1024)
  private hands = new Uint8Array(1024)
  private count = 0

  get size(): number {
    return this.count
  }

  /** Appends a palm of member `memberId` (a UUID, as the environment's galleries keep ids). */
  add(memberId: string, hand: Hand): void {
    if (this.count === this.hands.length) this.grow()
    const at = this.count * 16
    if (memberId.length !== 36) throw new TypeError(`not a UUID: ${JSON.stringify(memberId)}`)
    for (let byte = 0; byte < 16; byte++) {
      const high = DIGIT[memberId.charCodeAt(BYTE_AT[byte]) & 127]
      const low = DIGIT[memberId.charCodeAt(BYTE_AT[byte] + 1) & 127]
      if (high < 0 || low < 0) throw new TypeError(`not a UUID: ${JSON.stringify(memberId)}`)
      this.ids[at + byte] = (high << 4) | low
    }
    this.hands[this.count++] = HANDS.indexOf(hand)
  }

  memberOf(palm: number): string {
    const at = palm * 16
    let text = ''
    for (let byte = 0; byte < 16; byte++) text += (byte === 4 || byte === 6 || byte === 8 || byte === 10 ? '-' : '') + HEX[this.ids[at + byte]]
    return text
  }

  handOf(palm: number): Hand {
    return HANDS[this.hands[palm]]
  }

  private grow(): void {
    const ids = new Uint8Array(this.ids.length * 2)
    ids.set(this.ids)
    const hands = new Uint8Array(this.hands.length * 2)
    hands.set(this.hands)
    this.ids = ids
    this.hands = hands
  }
}
