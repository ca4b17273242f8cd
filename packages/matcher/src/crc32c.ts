// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of a PVT1 template.
// A byte-wise table is plenty: templates are at most 24 + 512 * 4 bytes.

const TABLE = (() => {
  const table = new Uint32Array(256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1
    table[byte] = crc >>> 0
  }
  return table
})()

/** Continues a CRC-32C over `bytes`; start with `crc = 0` (the default). */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  let state = ~crc >>> 0
  for (let index = 0; index < bytes.length; index++) {
    state = TABLE[(state ^ bytes[index]) & 0xff] ^ (state >>> 8)
  }
  return ~state >>> 0
}
