// Seeded, platform-independent randomness for the synthetic generator: a 32-bit hash to derive
// one stream per (seed, identity, hand, session, ...) tuple, so every capture is reproducible
// no matter in which order captures are requested, and sfc32 for the stream itself.

/** Mixes integers into one 32-bit seed (murmur3's finaliser after each word). */
export function hashSeed(...words: number[]): number {
  let hash = 0x9e3779b9
  for (const word of words) {
    hash = Math.imul(hash ^ (word >>> 0), 0x85ebca6b)
    hash ^= hash >>> 13
    hash = Math.imul(hash, 0xc2b2ae35)
    hash ^= hash >>> 16
    // Fold the high half of values up to 2^53 too, so large seeds do not collide.
    hash = Math.imul(hash ^ Math.floor(word / 0x100000000), 0x27d4eb2f)
    hash ^= hash >>> 15
  }
  return hash >>> 0
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number
  /** Standard normal. */
  gaussian(): number
}

export function createRandom(seed: number): Random {
  let a = seed >>> 0
  let b = hashSeed(seed, 1)
  let c = hashSeed(seed, 2)
  let d = 1
  let spare: number | null = null
  const nextUint32 = (): number => {
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return t >>> 0
  }
  for (let index = 0; index < 12; index++) nextUint32()
  const next = (): number => nextUint32() / 0x100000000
  return {
    next,
    gaussian() {
      if (spare !== null) {
        const value = spare
        spare = null
        return value
      }
      // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
      const radius = Math.sqrt(-2 * Math.log(1 - next()))
      const angle = 2 * Math.PI * next()
      spare = radius * Math.sin(angle)
      return radius * Math.cos(angle)
    },
  }
}
