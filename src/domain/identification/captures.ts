// Palm captures as clients send them (DECISIONS "Palm captures and matching"): a PVT1 template in
// base64url without padding (standard base64 with padding also accepted), checked against the
// environment's dimension, extractor and minimum quality. Every refusal is 400 capture_invalid
// naming the field, so a client can tell which of four captures was wrong.
import { ServiceError } from '../../errors.js'
import { decodeTemplate, quantizeFloat, TemplateError, templateToInt8, type Hand, type Template } from '@palmvein/matcher'

/** The environment facts a capture is checked against. */
export interface CaptureRules {
  dimension: number
  extractor_id: number
  extractor_version: number
  min_quality: number
}

export interface Capture {
  /** The PVT1 bytes as received (what is stored, encrypted). */
  bytes: Buffer
  template: Template
}

const BASE64URL_UNPADDED = /^[A-Za-z0-9_-]+$/
const BASE64_PADDED = /^[A-Za-z0-9+/]+={0,2}$/
const BASE64URL_VALUE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
// By length mod 4: the last character's bits that carry no data (2 characters: 4 bits, 3: 2 bits).
const TRAILING_BITS = [0, 0, 0b1111, 0b11]

function refuse(field: string, message: string): ServiceError {
  return new ServiceError('capture_invalid', `${field.slice(1).replaceAll('/', '.')}: ${message}`, { errors: [{ path: field, message }] })
}

/** Strict base64 decoding: one of the two accepted alphabets, canonical, nothing trailing. */
export function decodeCaptureText(text: string, field: string): Buffer {
  if (text.length === 0) throw refuse(field, 'is empty')
  let bytes: Buffer
  if (BASE64URL_UNPADDED.test(text)) {
    if (text.length % 4 === 1) throw refuse(field, 'is not valid base64url (truncated)')
    bytes = Buffer.from(text, 'base64url')
    // Buffer ignores stray trailing bits: the last character's bits past the data must be zero
    // (what a canonical round trip checks, without encoding the capture again).
    if (text.length % 4 !== 0 && (BASE64URL_VALUE.indexOf(text[text.length - 1]) & TRAILING_BITS[text.length % 4]) !== 0) {
      throw refuse(field, 'is not canonical base64url (non-zero trailing bits)')
    }
  } else if (BASE64_PADDED.test(text) && text.length % 4 === 0) {
    bytes = Buffer.from(text, 'base64')
    if (bytes.toString('base64') !== text) throw refuse(field, 'is not canonical base64 (bad padding or trailing bits)')
  } else {
    const bad = /[^A-Za-z0-9_\-+/=]/.exec(text)
    throw refuse(
      field,
      bad
        ? `contains ${JSON.stringify(bad[0])} at offset ${bad.index}; expected base64url without padding or standard base64 with padding`
        : 'mixes base64 alphabets or is badly padded; expected base64url without padding or standard base64 with padding',
    )
  }
  return bytes
}

/** Decodes a capture and checks it against the environment; `hand` is the slot it was sent in. */
export function parseCapture(text: string, field: string, rules: CaptureRules, hand: Hand | null): Capture {
  const bytes = decodeCaptureText(text, field)
  let template: Template
  try {
    template = decodeTemplate(bytes)
  } catch (error) {
    if (error instanceof TemplateError) throw refuse(field, `${error.message} (${error.code})`)
    throw error
  }
  if (template.dimension !== rules.dimension) {
    throw refuse(field, `dimension ${template.dimension}, but the environment uses ${rules.dimension}`)
  }
  if (template.extractorId !== rules.extractor_id || template.extractorVersion !== rules.extractor_version) {
    throw refuse(
      field,
      `extractor ${template.extractorId} version ${template.extractorVersion}, but the environment uses extractor ${rules.extractor_id} version ${rules.extractor_version}`,
    )
  }
  if (rules.min_quality > 0) {
    if (template.quality === null) throw refuse(field, `quality is unknown, but the environment requires at least ${rules.min_quality}`)
    if (template.quality < rules.min_quality) throw refuse(field, `quality ${template.quality} is under the environment's minimum ${rules.min_quality}`)
  }
  if (hand && template.hand && template.hand !== hand) {
    throw refuse(field, `is flagged as a ${template.hand}-hand capture but was sent as the ${hand} hand`)
  }
  return { bytes, template }
}

// Unit vectors and the reference's sum are written into these (the largest dimension is 512):
// fresh Float64Arrays were 10 KB of garbage a member in an import.
const scratch = [new Float64Array(512), new Float64Array(512), new Float64Array(512)]

/** A capture's components as a unit-norm float vector, in `out` (an int8 capture's scale cancels out). */
function unitVector(template: Template, out: Float64Array): Float64Array {
  // Plain loops: Float64Array.from(vector, mapFn) walks the iterator protocol per component, and
  // was a fifth of an import's time. The same arithmetic as int8UnitSum: v * (1 / |v|).
  const source = template.vector
  let sum = 0
  for (let index = 0; index < source.length; index++) sum += source[index] * source[index]
  const inverse = 1 / Math.sqrt(sum)
  for (let index = 0; index < source.length; index++) out[index] = source[index] * inverse
  return out
}

/**
 * One hand's reference template from its two enrollment captures, which must be of one palm: their
 * cosine reaches the environment's match threshold, as a later identify of that palm would have to.
 * Otherwise the reference would be the mean of two people (or of a palm and noise) and match
 * neither. The check and the mean share the captures' unit vectors (each was normalised twice).
 */
export function agreedReference(enroll: Capture, identify: Capture, threshold: number, field: string): Int8Array {
  const dimension = enroll.template.dimension
  const sum = scratch[2].subarray(0, dimension)
  let similarity = 0
  if (enroll.template.vector instanceof Int8Array && identify.template.vector instanceof Int8Array) {
    similarity = int8UnitSum(enroll.template.vector, identify.template.vector, sum)
  } else {
    const a = unitVector(enroll.template, scratch[0])
    const b = unitVector(identify.template, scratch[1])
    for (let index = 0; index < dimension; index++) {
      similarity += a[index] * b[index]
      sum[index] = a[index] + b[index]
    }
  }
  if (similarity < threshold) {
    throw refuse(
      `${field}/identify_capture`,
      `the enroll and identify captures disagree (similarity ${similarity.toFixed(3)} is under the environment's match threshold ${threshold}): they are not captures of one palm`,
    )
  }
  return quantizeMean(sum, field)
}

/**
 * Two int8 captures' cosine, and the sum of their unit vectors in `sum`: the norms and the dot
 * product in one pass of integer arithmetic (an int8 capture's scale cancels out of both).
 */
function int8UnitSum(a: Int8Array, b: Int8Array, sum: Float64Array): number {
  let aa = 0
  let bb = 0
  let ab = 0
  for (let index = 0; index < a.length; index++) {
    const x = a[index]
    const y = b[index]
    aa += x * x
    bb += y * y
    ab += x * y
  }
  const inverseA = 1 / Math.sqrt(aa)
  const inverseB = 1 / Math.sqrt(bb)
  for (let index = 0; index < a.length; index++) sum[index] = a[index] * inverseA + b[index] * inverseB
  return ab * inverseA * inverseB
}

/**
 * The reference template of one hand: the mean of its unit-norm captures, re-normalised and
 * quantised to the in-memory int8 form.
 */
export function referenceTemplate(captures: Capture[], field: string): Int8Array {
  const dimension = captures[0].template.dimension
  const sum = scratch[2].subarray(0, dimension).fill(0)
  for (const capture of captures) {
    const unit = unitVector(capture.template, scratch[0])
    for (let index = 0; index < dimension; index++) sum[index] += unit[index]
  }
  return quantizeMean(sum, field)
}

/** The int8 form of a sum of unit vectors. Two opposite captures have no mean direction. */
function quantizeMean(sum: Float64Array, field: string): Int8Array {
  try {
    return quantizeFloat(sum)
  } catch {
    throw refuse(field, 'the enroll and identify captures cancel each other out (opposite vectors)')
  }
}

/** The probe of an identify in the in-memory int8 form (the matcher's own conversion). */
export function probeVector(capture: Capture): Int8Array {
  return templateToInt8(capture.template)
}
