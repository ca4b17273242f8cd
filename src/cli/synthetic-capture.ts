// `palmvein capture --synthetic`: a PVT1 capture (base64url) from the seeded demo generator, for
// users without a palm sensor (the README walkthrough enrolls and identifies with these).
import { createSyntheticPopulation, DEMO_CAPTURES, type Hand } from '@palmvein/matcher'

export interface SyntheticCaptureOptions {
  identity: number
  hand: Hand
  /** Captures of one session are close; a later session drifts a little, as real visits do. */
  session: number
  attempt: number
  dimension: number
  seed: number
  extractorId: number
}

export function syntheticCapture(options: SyntheticCaptureOptions): string {
  const population = createSyntheticPopulation({
    seed: options.seed, dimension: options.dimension, identities: options.identity + 1, extractorId: options.extractorId, ...DEMO_CAPTURES,
  })
  const template = population.template(options.identity, options.hand, options.session, options.attempt, { quality: 90 })
  return Buffer.from(template).toString('base64url')
}
