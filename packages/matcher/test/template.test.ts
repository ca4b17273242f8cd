import { describe, expect, it } from 'vitest'
import { crc32c } from '../src/crc32c.js'
import { quantizeFloat } from '../src/quantize.js'
import { decodeTemplate, encodeTemplate, TemplateError, type TemplateErrorCode } from '../src/template.js'

function unitFloat(dimension: number, seed = 1): Float32Array {
  const vector = new Float32Array(dimension)
  let norm = 0
  for (let index = 0; index < dimension; index++) {
    vector[index] = Math.sin(seed * 7.1 + index * 1.3)
    norm += vector[index] ** 2
  }
  return vector.map((value) => value / Math.sqrt(norm))
}

/** Recomputes the CRC after a deliberate edit, so only the edited field is wrong. */
function resign(bytes: Uint8Array): Uint8Array {
  const crc = crc32c(bytes.subarray(24), crc32c(bytes.subarray(0, 20)))
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(20, crc, true)
  return bytes
}

function codeOf(action: () => unknown): TemplateErrorCode | 'no error' {
  try {
    action()
    return 'no error'
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError)
    return (error as TemplateError).code
  }
}

const base = { extractorId: 7, extractorVersion: 3, hand: 'right' as const, quality: 88 }

describe('CRC-32C', () => {
  it('matches the standard check value', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283)
  })
})

describe('quantizeFloat', () => {
  it('L2-normalises, scales by 127 and rounds half away from zero', () => {
    expect([...quantizeFloat([0.5, -0.5, 0.5, -0.5])]).toEqual([64, -64, 64, -64])
    expect([...quantizeFloat([2, 0, 0, 0])]).toEqual([127, 0, 0, 0])
    expect([...quantizeFloat([-3, 0])]).toEqual([-127, 0])
  })

  it('rounds every component as the definition says, on random vectors', () => {
    // The definition written plainly: magnitude minus its floor is exact, so ties are seen exactly.
    const halfAwayFromZero = (value: number) => {
      const magnitude = Math.abs(value)
      const whole = Math.floor(magnitude)
      return Math.sign(value) * Math.min(127, magnitude - whole >= 0.5 ? whole + 1 : whole)
    }
    let state = 12345
    const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5
    for (let trial = 0; trial < 2000; trial++) {
      const vector = Float64Array.from({ length: 64 }, random)
      const scale = 127 / Math.hypot(...vector)
      expect([...quantizeFloat(vector)]).toEqual(Array.from(vector, (value) => halfAwayFromZero(value * scale) || 0))
    }
  })
})

describe('PVT1 encode/decode', () => {
  it('round-trips a float32 template with every header field', () => {
    const vector = unitFloat(256)
    const bytes = encodeTemplate({ vector, ...base, presentationAttackPassed: true })
    expect(bytes.length).toBe(24 + 256 * 4)
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('PVT1')
    const template = decodeTemplate(bytes)
    expect(template).toMatchObject({
      elementType: 'float32',
      dimension: 256,
      extractorId: 7,
      extractorVersion: 3,
      hand: 'right',
      presentationAttackPassed: true,
      quality: 88,
    })
    expect([...template.vector]).toEqual([...vector])
  })

  it('round-trips an int8 template, unknown hand and quality', () => {
    const vector = quantizeFloat(unitFloat(128, 2))
    const bytes = encodeTemplate({ vector, extractorId: 1, extractorVersion: 2 })
    expect(bytes.length).toBe(24 + 128)
    const template = decodeTemplate(bytes, { dimension: 128 })
    expect(template).toMatchObject({ elementType: 'int8', hand: null, quality: null, presentationAttackPassed: false })
    expect(template.scale).toBeCloseTo(1 / 127, 9)
    expect([...template.vector]).toEqual([...vector])
  })

  it('decodes a left hand from a view with a byte offset', () => {
    const bytes = encodeTemplate({ vector: unitFloat(512), ...base, hand: 'left' })
    const padded = new Uint8Array(bytes.length + 3)
    padded.set(bytes, 3)
    expect(decodeTemplate(padded.subarray(3)).hand).toBe('left')
  })

  const valid = () => encodeTemplate({ vector: unitFloat(256), ...base })
  const cases: [string, TemplateErrorCode, () => unknown][] = [
    [
      'bad magic',
      'bad_magic',
      () => {
        const b = valid()
        b[0] = 0x51
        return decodeTemplate(resign(b))
      },
    ],
    ['short header', 'bad_length', () => decodeTemplate(valid().subarray(0, 23))],
    ['truncated payload', 'bad_length', () => decodeTemplate(valid().subarray(0, 24 + 255 * 4))],
    [
      'trailing bytes',
      'bad_length',
      () => {
        const b = valid()
        const longer = new Uint8Array(b.length + 1)
        longer.set(b)
        return decodeTemplate(longer)
      },
    ],
    [
      'payload corruption',
      'bad_crc',
      () => {
        const b = valid()
        b[100] ^= 1
        return decodeTemplate(b)
      },
    ],
    [
      'header corruption',
      'bad_crc',
      () => {
        const b = valid()
        b[9] ^= 1
        return decodeTemplate(b)
      },
    ],
    [
      'dimension 100',
      'bad_dimension',
      () => {
        const b = valid()
        b[6] = 100
        b[7] = 0
        return decodeTemplate(resign(b))
      },
    ],
    ['unexpected dimension', 'dimension_mismatch', () => decodeTemplate(valid(), { dimension: 128 })],
    [
      'NaN component',
      'non_finite',
      () => {
        const b = valid()
        new DataView(b.buffer).setFloat32(24 + 8, Number.NaN, true)
        return decodeTemplate(resign(b))
      },
    ],
    [
      'infinite component',
      'non_finite',
      () => {
        const b = valid()
        new DataView(b.buffer).setFloat32(24, Infinity, true)
        return decodeTemplate(resign(b))
      },
    ],
    [
      'zero vector',
      'zero_vector',
      () => {
        const b = valid()
        b.fill(0, 24)
        return decodeTemplate(resign(b))
      },
    ],
    [
      'element type 2',
      'unsupported_element_type',
      () => {
        const b = valid()
        b[5] = 2
        return decodeTemplate(resign(b))
      },
    ],
    [
      'reserved nonzero',
      'reserved_nonzero',
      () => {
        const b = valid()
        b[15] = 1
        return decodeTemplate(resign(b))
      },
    ],
    [
      'minor version 1',
      'unsupported_version',
      () => {
        const b = valid()
        b[4] = 1
        return decodeTemplate(resign(b))
      },
    ],
    [
      'quality 101',
      'bad_quality',
      () => {
        const b = valid()
        b[13] = 101
        return decodeTemplate(resign(b))
      },
    ],
    [
      'int8 -128',
      'element_out_of_range',
      () => {
        const b = encodeTemplate({ vector: quantizeFloat(unitFloat(128)), ...base })
        b[30] = 0x80
        return decodeTemplate(resign(b))
      },
    ],
    ['encode NaN', 'non_finite', () => encodeTemplate({ vector: new Float32Array(256).fill(Number.NaN), ...base })],
    ['encode zero', 'zero_vector', () => encodeTemplate({ vector: new Int8Array(128), ...base })],
    ['encode dimension 200', 'bad_dimension', () => encodeTemplate({ vector: new Float32Array(200).fill(1), ...base })],
  ]
  it.each(cases)('%s -> %s', (_name, code, action) => {
    expect(codeOf(action)).toBe(code)
  })

  it('accepts the untouched template the error cases start from', () => {
    expect(codeOf(() => decodeTemplate(valid()))).toBe('no error')
  })
})
