// A template set from the seeded synthetic population (the benchmark's generator, hard and
// look-alike identities included): `enrolled` subjects with two gallery captures per hand (one
// visit, as enroll takes them) and a probe per hand from a later visit; `unenrolled` subjects with
// probes only (the non-mated probes).
import { createSyntheticPopulation } from '@palmvein/matcher'
import type { EvalHand, TemplateLine } from './evaluate.js'

export interface SyntheticSetOptions {
  enrolled: number
  unenrolled: number
  seed: number
  dimension: number
}

const HANDS: EvalHand[] = ['left', 'right']

export function* syntheticTemplateSet(options: SyntheticSetOptions): Generator<TemplateLine> {
  const population = createSyntheticPopulation({ seed: options.seed, dimension: options.dimension, identities: options.enrolled + options.unenrolled })
  const line = (identity: number, hand: EvalHand, role: TemplateLine['role'], session: number, attempt: number): TemplateLine => ({
    subject: `synthetic-${identity}`,
    hand,
    role,
    capture: Buffer.from(population.template(identity, hand, session, attempt)).toString('base64url'),
  })
  for (let identity = 0; identity < options.enrolled + options.unenrolled; identity++) {
    for (const hand of HANDS) {
      if (identity < options.enrolled) {
        yield line(identity, hand, 'gallery', 0, 0)
        yield line(identity, hand, 'gallery', 0, 1)
      }
      yield line(identity, hand, 'probe', 1, 0)
    }
  }
}
