// Turns what callers pass (an int8 vector, a float vector, or PVT1 bytes) into the in-memory
// int8 form, refusing anything the kernels' contract does not allow.
import { findOutOfRangeInt8, quantizeFloat } from './quantize.js'
import { decodeTemplate, TemplateError, templateToInt8 } from './template.js'

/** Int8Array: already quantised; Float32Array/Float64Array: quantised; Uint8Array: PVT1 bytes. */
export type VectorInput = Int8Array | Float32Array | Float64Array | Uint8Array

export function toInt8Vector(input: VectorInput, dimension: number): Int8Array {
  if (input instanceof Uint8Array) return templateToInt8(decodeTemplate(input, { dimension }))
  if (input.length !== dimension) {
    throw new TemplateError('dimension_mismatch', `vector has ${input.length} components, expected ${dimension}`)
  }
  if (input instanceof Int8Array) {
    const at = findOutOfRangeInt8(input)
    if (at >= 0) throw new TemplateError('element_out_of_range', `component ${at} is -128; int8 vectors are symmetric (-127..127)`)
    let nonZero = false
    for (let index = 0; index < input.length && !nonZero; index++) nonZero = input[index] !== 0
    if (!nonZero) throw new TemplateError('zero_vector', 'the vector is all zeros')
    return input
  }
  let sumOfSquares = 0
  for (let index = 0; index < input.length; index++) {
    if (!Number.isFinite(input[index])) throw new TemplateError('non_finite', `component ${index} is not finite`)
    sumOfSquares += input[index] * input[index]
  }
  if (sumOfSquares === 0) throw new TemplateError('zero_vector', 'the vector is all zeros')
  if (!Number.isFinite(sumOfSquares)) throw new TemplateError('non_finite', 'the vector norm overflows')
  return quantizeFloat(input)
}
