// A canonical UUID's text ("8-4-4-4-12" hex digits, either case) as its 16 bytes, parsed without
// allocating: the id index keys rows by them, and COPY writes uuid columns with them.

/** Writes the 16 bytes of `id` at `out[offset]`; false (leaving `out` partly written) when `id` is not a canonical UUID. */
export function parseUuidInto(id: string, out: Uint8Array, offset = 0): boolean {
  if (id.length !== 36) return false
  let at = offset
  for (let index = 0; index < 36; index++) {
    if (index === 8 || index === 13 || index === 18 || index === 23) {
      if (id.charCodeAt(index) !== 45) return false
      continue
    }
    const high = hexValue(id.charCodeAt(index++))
    const low = hexValue(id.charCodeAt(index))
    if (high < 0 || low < 0) return false
    out[at++] = (high << 4) | low
  }
  return true
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  if (code >= 97 && code <= 102) return code - 87
  if (code >= 65 && code <= 70) return code - 55
  return -1
}
