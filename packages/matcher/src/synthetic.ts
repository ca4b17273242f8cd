// A seeded synthetic palm-template population for tests, benchmarks and demo data. Real palm
// vein embeddings are not isotropic: a few directions carry most of the variance, some people
// are hard to capture consistently, sessions drift, and look-alike palms exist. Each of those
// is a parameter here so tests can make both easy and adversarial galleries.
import { createRandom, hashSeed, type Random } from './random.js'
import { encodeTemplate, type Hand } from './template.js'
import { quantizeFloat } from './quantize.js'

export interface SyntheticOptions {
  /** Any integer; the same seed and options always give the same population. */
  seed: number
  /** Components per template; a power of two (PVT1 allows 128, 256, 512). */
  dimension: number
  /** Number of identities (people); each has a left and a right palm. */
  identities: number
  /**
   * Spectrum decay α: before a random rotation, component k (1-based) of an identity centre has
   * scale k^-α. 0 is isotropic; larger values crowd centres into few directions and raise
   * non-mated scores (std of a non-mated cosine ≈ 0.09 at α = 0.3, ≈ 0.2 at α = 0.5 for d = 256).
   * Default 0.3.
   */
  spectrumDecay?: number
  /** Typical capture noise: the norm of the noise added to a unit-norm centre. Default 0.3. */
  noise?: number
  /** Per-identity spread of the noise level (log-normal σ). Default 0.25. */
  noiseSpread?: number
  /** Share of hard-to-match identities whose noise is multiplied by `hardNoiseFactor`. Default 0.05. */
  hardFraction?: number
  /** Default 2. */
  hardNoiseFactor?: number
  /** Norm of the offset each session (enrolment day, device) adds to all its captures. Default 0.15. */
  sessionDrift?: number
  /** Share of identities whose palms are near-duplicates of an earlier identity's. Default 0.02. */
  relatedFraction?: number
  /** Cosine between a related identity's centre and its look-alike's. Default 0.7. */
  relatedSimilarity?: number
  /** Written into PVT1 templates. Defaults 1 and 1. */
  extractorId?: number
  extractorVersion?: number
}

export interface IdentityProfile {
  identity: number
  /** Noise norm of this identity's captures. */
  noise: number
  hard: boolean
  /** The earlier identity this one's palms resemble, or null. */
  relatedTo: number | null
}

export interface TemplateOptions {
  /** 'float32' (default) as a capture device sends it, or 'int8' already quantised. */
  elementType?: 'float32' | 'int8'
  quality?: number | null
}

export interface SyntheticPopulation {
  readonly options: Readonly<Required<SyntheticOptions>>
  profile(identity: number): IdentityProfile
  /** The identity's true palm (unit norm), before noise and drift. */
  centre(identity: number, hand: Hand): Float32Array
  /** One capture: centre + session drift + capture noise, L2-normalised. */
  capture(identity: number, hand: Hand, session?: number, attempt?: number): Float32Array
  /** The capture quantised to the in-memory int8 form. */
  captureInt8(identity: number, hand: Hand, session?: number, attempt?: number): Int8Array
  /** The capture as PVT1 bytes. */
  template(identity: number, hand: Hand, session?: number, attempt?: number, options?: TemplateOptions): Uint8Array
}

const HAND_CODE: Record<Hand, number> = { left: 0, right: 1 }
// Stream tags, so the draws for different purposes never share a random stream.
const STREAM = { rotation: 1, profile: 2, centre: 3, drift: 4, noise: 5 } as const

/** Normalised fast Walsh–Hadamard transform, in place (length a power of two): orthogonal. */
function hadamard(values: Float64Array): void {
  for (let width = 1; width < values.length; width <<= 1) {
    for (let start = 0; start < values.length; start += width << 1) {
      for (let index = start; index < start + width; index++) {
        const a = values[index]
        const b = values[index + width]
        values[index] = a + b
        values[index + width] = a - b
      }
    }
  }
  const scale = 1 / Math.sqrt(values.length)
  for (let index = 0; index < values.length; index++) values[index] *= scale
}

function normalise(values: Float64Array): Float64Array {
  let sum = 0
  for (let index = 0; index < values.length; index++) sum += values[index] * values[index]
  const scale = 1 / Math.sqrt(sum)
  for (let index = 0; index < values.length; index++) values[index] *= scale
  return values
}

function gaussianVector(random: Random, dimension: number, scale = 1): Float64Array {
  const values = new Float64Array(dimension)
  for (let index = 0; index < dimension; index++) values[index] = random.gaussian() * scale
  return values
}

/**
 * Settings of the demo captures (`palmvein capture --synthetic`, the README walkthrough, the
 * service's tests): low noise, no hard or look-alike identities, so a later capture of an enrolled
 * palm is Found at the default threshold and another person's is NotFound.
 */
export const DEMO_CAPTURES = { noise: 0.15, sessionDrift: 0.05, hardFraction: 0, relatedFraction: 0 } as const

function syntheticSettings(options: SyntheticOptions): Required<SyntheticOptions> {
  const settings: Required<SyntheticOptions> = {
    spectrumDecay: 0.3,
    noise: 0.3,
    noiseSpread: 0.25,
    hardFraction: 0.05,
    hardNoiseFactor: 2,
    sessionDrift: 0.15,
    relatedFraction: 0.02,
    relatedSimilarity: 0.7,
    extractorId: 1,
    extractorVersion: 1,
    ...options,
  }
  const { dimension, identities } = settings
  if (!Number.isInteger(dimension) || dimension < 2 || (dimension & (dimension - 1)) !== 0) {
    throw new RangeError(`dimension must be a power of two, got ${dimension}`)
  }
  if (!Number.isInteger(identities) || identities < 1) throw new RangeError(`identities must be a positive integer, got ${identities}`)
  return settings
}

/**
 * A structured random rotation R = H·D3·H·D2·H·D1 (H Hadamard, D random signs): orthogonal,
 * O(d log d) per vector, and it spreads the decaying spectrum over every component. Rotates in place.
 */
function structuredRotation(seed: number, dimension: number): (values: Float64Array) => Float64Array {
  const rotationRandom = createRandom(hashSeed(seed, STREAM.rotation))
  const signs = [0, 1, 2].map(() => Float64Array.from({ length: dimension }, () => (rotationRandom.next() < 0.5 ? -1 : 1)))
  return (values) => {
    for (const sign of signs) {
      for (let index = 0; index < dimension; index++) values[index] *= sign[index]
      hadamard(values)
    }
    return values
  }
}

/** A unit centre at cosine `similarity` from the unit `lookAlike`, the rest of it along `fresh`. */
function lookAlikeOf(fresh: Float64Array, lookAlike: Float64Array, similarity: number): Float64Array {
  // Remove fresh's component along the look-alike so the mix has exactly the cosine asked for.
  let along = 0
  for (let index = 0; index < fresh.length; index++) along += fresh[index] * lookAlike[index]
  const orthogonal = normalise(fresh.map((value, index) => value - along * lookAlike[index]))
  const rest = Math.sqrt(1 - similarity * similarity)
  return orthogonal.map((value, index) => similarity * lookAlike[index] + rest * value)
}

export function createSyntheticPopulation(options: SyntheticOptions): SyntheticPopulation {
  const settings = syntheticSettings(options)
  const { seed, dimension, identities } = settings

  const rotate = structuredRotation(seed, dimension)
  const spectrum = Float64Array.from({ length: dimension }, (_, index) => (index + 1) ** -settings.spectrumDecay)

  const checkIdentity = (identity: number): void => {
    if (!Number.isInteger(identity) || identity < 0 || identity >= identities) {
      throw new RangeError(`identity must be an integer in 0..${identities - 1}, got ${identity}`)
    }
  }

  function profile(identity: number): IdentityProfile {
    checkIdentity(identity)
    const random = createRandom(hashSeed(seed, STREAM.profile, identity))
    const hard = random.next() < settings.hardFraction
    const related = identity > 0 && random.next() < settings.relatedFraction
    const relatedTo = related ? Math.floor(random.next() * identity) : null
    const noise = settings.noise * Math.exp(settings.noiseSpread * random.gaussian()) * (hard ? settings.hardNoiseFactor : 1)
    return { identity, noise, hard, relatedTo }
  }

  // Centres are reused by every capture of an identity; cache a bounded number of them.
  const centres = new Map<string, Float64Array>()
  function centreOf(identity: number, hand: Hand): Float64Array {
    const key = `${identity}:${hand}`
    const cached = centres.get(key)
    if (cached) return cached
    const random = createRandom(hashSeed(seed, STREAM.centre, identity, HAND_CODE[hand]))
    const fresh = rotate(normalise(gaussianVector(random, dimension).map((value, index) => value * spectrum[index])))
    const { relatedTo } = profile(identity)
    let centre = fresh
    if (relatedTo !== null) centre = lookAlikeOf(fresh, centreOf(relatedTo, hand), settings.relatedSimilarity)
    if (centres.size >= 65536) centres.clear()
    centres.set(key, centre)
    return centre
  }

  function capture(identity: number, hand: Hand, session = 0, attempt = 0): Float32Array {
    const { noise } = profile(identity)
    const centre = centreOf(identity, hand)
    const driftRandom = createRandom(hashSeed(seed, STREAM.drift, identity, HAND_CODE[hand], session))
    const drift = normalise(gaussianVector(driftRandom, dimension))
    const noiseRandom = createRandom(hashSeed(seed, STREAM.noise, identity, HAND_CODE[hand], session, attempt))
    // Per-component σ = noise / √d gives a noise vector of norm ≈ noise.
    const noiseScale = noise / Math.sqrt(dimension)
    const values = new Float64Array(dimension)
    for (let index = 0; index < dimension; index++) {
      values[index] = centre[index] + settings.sessionDrift * drift[index] + noiseScale * noiseRandom.gaussian()
    }
    return Float32Array.from(normalise(values))
  }

  return {
    options: settings,
    profile,
    centre: (identity, hand) => {
      checkIdentity(identity)
      return Float32Array.from(centreOf(identity, hand))
    },
    capture,
    captureInt8: (identity, hand, session, attempt) => quantizeFloat(capture(identity, hand, session, attempt)),
    template(identity, hand, session, attempt, templateOptions = {}) {
      const vector = capture(identity, hand, session, attempt)
      return encodeTemplate({
        vector: templateOptions.elementType === 'int8' ? quantizeFloat(vector) : vector,
        extractorId: settings.extractorId,
        extractorVersion: settings.extractorVersion,
        hand,
        quality: templateOptions.quality ?? null,
      })
    },
  }
}
