// PVT1 captures as the service takes them: base64url (no padding) of the bytes the matcher's one
// encoder writes (@palmvein/matcher encodeTemplate; docs/pvt1.md). The service decodes with the
// same package, so a capture built here is what it checks.
import { createSyntheticPopulation, DEMO_CAPTURES, encodeTemplate, type Hand } from '@palmvein/matcher'

export type { Hand } from '@palmvein/matcher'

export interface CaptureOptions {
  /** The environment's extractor (default 1, version 1: an environment's defaults). */
  extractorId?: number
  extractorVersion?: number
  /** Flag the capture as this hand (the service refuses a capture sent in the other hand's slot). */
  hand?: Hand | null
  /** 0..100; omitted: unknown, which an environment with a min_quality refuses. */
  quality?: number | null
  presentationAttackPassed?: boolean
}

/**
 * A capture from an extractor's feature vector (128, 256 or 512 components, the environment's
 * dimension). Float vectors go out as float32, an Int8Array as int8 (scale 1/127). Throws the
 * matcher's TemplateError (with its `code`) for a vector PVT1 cannot hold: zero, not finite, a
 * dimension PVT1 does not know.
 */
export function captureFromVector(vector: Float32Array | Float64Array | Int8Array | readonly number[], options: CaptureOptions = {}): string {
  const components = vector instanceof Int8Array || vector instanceof Float32Array ? vector : Float32Array.from(vector)
  const bytes = encodeTemplate({
    vector: components,
    extractorId: options.extractorId ?? 1,
    extractorVersion: options.extractorVersion ?? 1,
    hand: options.hand ?? null,
    quality: options.quality ?? null,
    presentationAttackPassed: options.presentationAttackPassed ?? false,
  })
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
}

export interface SyntheticCaptureOptions {
  /** The synthetic person (0, 1, 2, …): the same number is the same palm. */
  identity: number
  hand: Hand
  /** Captures of one session (visit) are close; a later session drifts a little. Default 0. */
  session?: number
  /** Default 0. */
  attempt?: number
  /** The environment's dimension (default 256). */
  dimension?: number
  /** The population's seed (default 7, as `palmvein capture --synthetic`). */
  seed?: number
  extractorId?: number
}

/** A seeded synthetic palm capture: `palmvein capture --synthetic` for code, and the simulated terminal's sensor. */
export function syntheticCapture(options: SyntheticCaptureOptions): string {
  const population = createSyntheticPopulation({
    seed: options.seed ?? 7,
    dimension: options.dimension ?? 256,
    identities: options.identity + 1,
    extractorId: options.extractorId ?? 1,
    ...DEMO_CAPTURES,
  })
  const template = population.template(options.identity, options.hand, options.session ?? 0, options.attempt ?? 0, { quality: 90 })
  return Buffer.from(template.buffer, template.byteOffset, template.byteLength).toString('base64url')
}
