// PVT1: the binary palm template (docs/matcher.md and spec/DECISIONS.md). Little-endian,
// a 24-byte header then d components:
//   0 magic "PVT1" | 4 minor version (0) | 5 element type (1 int8, 3 float32) | 6 dimension u16
//   8 extractor id u16 | 10 extractor version u16 | 12 flags | 13 quality | 14 reserved u16 (0)
//   16 scale f32 | 20 CRC-32C of bytes 0..19 followed by the payload | 24 payload
import { crc32c } from './crc32c.js'
import { findOutOfRangeInt8, INT8_LIMIT, quantizeFloat } from './quantize.js'

export const TEMPLATE_HEADER_BYTES = 24
export const TEMPLATE_DIMENSIONS: readonly number[] = [128, 256, 512]
const MAGIC = [0x50, 0x56, 0x54, 0x31] // "PVT1"
const ELEMENT_INT8 = 1
const ELEMENT_FLOAT32 = 3
const FLAG_RIGHT_HAND = 1
const FLAG_HAND_KNOWN = 2
const FLAG_PRESENTATION_ATTACK_PASSED = 4
const QUALITY_UNKNOWN = 255

/** Stable, machine-readable reasons a template is refused. */
export type TemplateErrorCode =
  | 'bad_length'
  | 'bad_magic'
  | 'unsupported_version'
  | 'unsupported_element_type'
  | 'bad_dimension'
  | 'dimension_mismatch'
  | 'bad_crc'
  | 'reserved_nonzero'
  | 'bad_quality'
  | 'non_finite'
  | 'zero_vector'
  | 'element_out_of_range'

export class TemplateError extends Error {
  override readonly name = 'TemplateError'
  constructor(
    readonly code: TemplateErrorCode,
    message: string,
  ) {
    super(message)
  }
}

export type Hand = 'left' | 'right'

export interface TemplateInput {
  /** An L2-normalised feature vector; float32 is stored as is, int8 with `scale`. */
  vector: Float32Array | Int8Array
  extractorId: number
  extractorVersion: number
  /** Omitted or null: hand unknown. */
  hand?: Hand | null
  /** 0..100; omitted or null: unknown (255). */
  quality?: number | null
  presentationAttackPassed?: boolean
  /** int8 only: value × scale = component. Default 1/127, the in-memory quantisation. */
  scale?: number
}

export interface Template {
  elementType: 'int8' | 'float32'
  dimension: number
  extractorId: number
  extractorVersion: number
  hand: Hand | null
  presentationAttackPassed: boolean
  quality: number | null
  scale: number
  /** The payload as stored (a copy, never a view of the input). */
  vector: Float32Array | Int8Array
}

export interface DecodeOptions {
  /** Refuse a template of another dimension with `dimension_mismatch`. */
  dimension?: number
}

function checkUint16(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff) throw new RangeError(`${name} must be an integer in 0..65535`)
}

/** Encodes a template as PVT1 bytes. Throws TemplateError for vectors PVT1 cannot hold. */
export function encodeTemplate(input: TemplateInput): Uint8Array {
  const { vector } = input
  const dimension = vector.length
  if (!TEMPLATE_DIMENSIONS.includes(dimension)) throw new TemplateError('bad_dimension', `dimension ${dimension} is not one of 128, 256, 512`)
  checkUint16('extractorId', input.extractorId)
  checkUint16('extractorVersion', input.extractorVersion)
  const quality = input.quality ?? QUALITY_UNKNOWN
  if (!Number.isInteger(quality) || (quality > 100 && quality !== QUALITY_UNKNOWN) || quality < 0) {
    throw new TemplateError('bad_quality', `quality ${quality} is not in 0..100`)
  }
  checkVector(vector)
  const isInt8 = vector instanceof Int8Array
  const bytes = new Uint8Array(TEMPLATE_HEADER_BYTES + dimension * (isInt8 ? 1 : 4))
  const view = new DataView(bytes.buffer)
  bytes.set(MAGIC, 0)
  bytes[4] = 0
  bytes[5] = isInt8 ? ELEMENT_INT8 : ELEMENT_FLOAT32
  view.setUint16(6, dimension, true)
  view.setUint16(8, input.extractorId, true)
  view.setUint16(10, input.extractorVersion, true)
  let flags = 0
  if (input.hand) flags |= FLAG_HAND_KNOWN | (input.hand === 'right' ? FLAG_RIGHT_HAND : 0)
  if (input.presentationAttackPassed) flags |= FLAG_PRESENTATION_ATTACK_PASSED
  bytes[12] = flags
  bytes[13] = quality
  view.setFloat32(16, isInt8 ? (input.scale ?? 1 / INT8_LIMIT) : 0, true)
  if (isInt8) {
    bytes.set(new Uint8Array(vector.buffer, vector.byteOffset, dimension), TEMPLATE_HEADER_BYTES)
  } else {
    for (let index = 0; index < dimension; index++) view.setFloat32(TEMPLATE_HEADER_BYTES + index * 4, vector[index], true)
  }
  view.setUint32(20, templateCrc(bytes), true)
  return bytes
}

function templateCrc(bytes: Uint8Array): number {
  return crc32c(bytes.subarray(TEMPLATE_HEADER_BYTES), crc32c(bytes.subarray(0, 20)))
}

function checkVector(vector: Float32Array | Int8Array): void {
  let nonZero = false
  if (vector instanceof Int8Array) {
    const at = findOutOfRangeInt8(vector)
    if (at >= 0) throw new TemplateError('element_out_of_range', `component ${at} is -128; int8 templates are symmetric (-127..127)`)
    for (let index = 0; index < vector.length && !nonZero; index++) nonZero = vector[index] !== 0
  } else {
    for (let index = 0; index < vector.length; index++) {
      if (!Number.isFinite(vector[index])) throw new TemplateError('non_finite', `component ${index} is not finite`)
      if (vector[index] !== 0) nonZero = true
    }
  }
  if (!nonZero) throw new TemplateError('zero_vector', 'the vector is all zeros')
}

/** Decodes and validates PVT1 bytes; throws a TemplateError with a stable code. */
export function decodeTemplate(bytes: Uint8Array, options: DecodeOptions = {}): Template {
  if (bytes.length < TEMPLATE_HEADER_BYTES) throw new TemplateError('bad_length', `${bytes.length} bytes is shorter than the 24-byte header`)
  for (let index = 0; index < MAGIC.length; index++) {
    if (bytes[index] !== MAGIC[index]) throw new TemplateError('bad_magic', 'the template does not start with "PVT1"')
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const elementType = bytes[5]
  if (elementType !== ELEMENT_INT8 && elementType !== ELEMENT_FLOAT32) {
    throw new TemplateError('unsupported_element_type', `element type ${elementType} is not 1 (int8) or 3 (float32)`)
  }
  const dimension = view.getUint16(6, true)
  if (!TEMPLATE_DIMENSIONS.includes(dimension)) throw new TemplateError('bad_dimension', `dimension ${dimension} is not one of 128, 256, 512`)
  const expectedLength = TEMPLATE_HEADER_BYTES + dimension * (elementType === ELEMENT_INT8 ? 1 : 4)
  if (bytes.length !== expectedLength) {
    throw new TemplateError('bad_length', `${bytes.length} bytes, expected ${expectedLength} for ${dimension} components`)
  }
  if (view.getUint32(20, true) !== templateCrc(bytes)) throw new TemplateError('bad_crc', 'CRC-32C mismatch')
  // Checked after the CRC: a corrupted byte reports as corruption, not as a format choice.
  if (bytes[4] !== 0) throw new TemplateError('unsupported_version', `minor version ${bytes[4]} is not 0`)
  if (view.getUint16(14, true) !== 0) throw new TemplateError('reserved_nonzero', 'reserved bytes 14..15 must be zero')
  if (options.dimension !== undefined && dimension !== options.dimension) {
    throw new TemplateError('dimension_mismatch', `dimension ${dimension}, expected ${options.dimension}`)
  }
  const quality = bytes[13]
  if (quality > 100 && quality !== QUALITY_UNKNOWN) throw new TemplateError('bad_quality', `quality ${quality} is not in 0..100 or 255`)
  const payload = bytes.subarray(TEMPLATE_HEADER_BYTES)
  let vector: Float32Array | Int8Array
  if (elementType === ELEMENT_INT8) {
    vector = new Int8Array(dimension)
    vector.set(new Int8Array(payload.buffer, payload.byteOffset, dimension))
  } else {
    vector = new Float32Array(dimension)
    for (let index = 0; index < dimension; index++) vector[index] = view.getFloat32(TEMPLATE_HEADER_BYTES + index * 4, true)
  }
  checkVector(vector)
  const scale = view.getFloat32(16, true)
  if (elementType === ELEMENT_INT8 && !(Number.isFinite(scale) && scale > 0)) {
    throw new TemplateError('non_finite', `int8 scale ${scale} is not a finite positive number`)
  }
  const flags = bytes[12]
  return {
    elementType: elementType === ELEMENT_INT8 ? 'int8' : 'float32',
    dimension,
    extractorId: view.getUint16(8, true),
    extractorVersion: view.getUint16(10, true),
    hand: flags & FLAG_HAND_KNOWN ? (flags & FLAG_RIGHT_HAND ? 'right' : 'left') : null,
    presentationAttackPassed: (flags & FLAG_PRESENTATION_ATTACK_PASSED) !== 0,
    quality: quality === QUALITY_UNKNOWN ? null : quality,
    scale,
    vector,
  }
}

/**
 * The in-memory int8 form of a decoded template. int8 payloads are used as stored (the cosine
 * does not depend on the scale); float32 payloads go through the one quantisation.
 */
export function templateToInt8(template: Template): Int8Array {
  return template.vector instanceof Int8Array ? template.vector : quantizeFloat(template.vector)
}
