// A register with planted duplicates for the deduplication bench and tests: `base` members from
// the synthetic population (its defaults: 5 % hard identities, 2 % look-alike identities), then
// `duplicates` members who are base members enrolled again (another session of the same palms;
// hard ones included), then `lookAlikes` members whose left palm is a base member's mixed with
// noise to a cosine just above or just below `threshold` (alternately, within ±0.02) and whose
// right palm is nobody's. Each member has a left and a right palm: palm 2m is member m's left.
import { createRandom, hashSeed } from '@palmvein/matcher/random'
import { createSyntheticPopulation } from '@palmvein/matcher'

export interface PlantedRegisterOptions {
  seed: number
  dimension: number
  base: number
  duplicates: number
  lookAlikes: number
  threshold: number
}

export interface PlantedRegister {
  readonly members: number
  readonly dimension: number
  /** Member `member`'s palm (unit norm, float): hand 0 = left, 1 = right. */
  palm(member: number, hand: 0 | 1): Float32Array
  /** The base member a planted member (a duplicate or a look-alike) was made from; null for a base member. */
  source(member: number): number | null
}

function unit(values: Float64Array): Float32Array {
  let norm = 0
  for (const value of values) norm += value * value
  const out = new Float32Array(values.length)
  for (let index = 0; index < values.length; index++) out[index] = values[index] / Math.sqrt(norm)
  return out
}

export function createPlantedRegister(options: PlantedRegisterOptions): PlantedRegister {
  const { seed, dimension, base, duplicates, lookAlikes, threshold } = options
  const population = createSyntheticPopulation({ seed, dimension, identities: base })
  const hands = ['left', 'right'] as const
  // Which base member each planted member copies, spread over the base.
  const source = (index: number) => Math.floor(((index + 0.5) * base) / Math.max(1, duplicates + lookAlikes)) % base
  const noise = (member: number, hand: number): Float64Array => {
    const random = createRandom(hashSeed(seed, 99, member, hand))
    return Float64Array.from({ length: dimension }, () => random.gaussian())
  }
  return {
    members: base + duplicates + lookAlikes,
    dimension,
    source: (member) => (member < base ? null : source(member - base)),
    palm(member, hand) {
      if (member < base) return population.capture(member, hands[hand], 0, 0)
      if (member < base + duplicates) return population.capture(source(member - base), hands[hand], 1, 0)
      const index = member - base - duplicates
      if (hand === 1) return unit(noise(member, hand))
      // x·target + y·(noise orthogonal to target): cosine x with the target.
      const target = population.capture(source(duplicates + index), 'left', 0, 0)
      const cosine = threshold + ((index % 2 === 0 ? 1 : -1) * 0.02 * ((index % 7) + 1)) / 7
      const other = noise(member, hand)
      let along = 0
      for (let component = 0; component < dimension; component++) along += other[component] * target[component]
      for (let component = 0; component < dimension; component++) other[component] -= along * target[component]
      const orthogonal = unit(other)
      const mixed = new Float64Array(dimension)
      const rest = Math.sqrt(1 - cosine * cosine)
      for (let component = 0; component < dimension; component++) mixed[component] = cosine * target[component] + rest * orthogonal[component]
      return unit(mixed)
    },
  }
}
