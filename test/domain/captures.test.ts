// The reference a hand is enrolled with: enroll (and import) build it with agreedReference, the
// accuracy tool with referenceTemplate; both must give the same bytes, and the cosine that
// decides whether the two captures agree must be the plain float one.
import { describe, expect, it } from 'vitest'
import { agreedReference, parseCapture, referenceTemplate } from '../../src/domain/identification/captures.js'
import { createSyntheticPopulation, decodeTemplate, type Hand } from '@palmvein/matcher'

const rules = { dimension: 256, extractor_id: 1, extractor_version: 1, min_quality: 0 }

describe('agreedReference', () => {
  const population = createSyntheticPopulation({ seed: 5, dimension: 256, identities: 300 })
  const capture = (identity: number, hand: Hand, attempt: number, elementType: 'int8' | 'float32') =>
    parseCapture(Buffer.from(population.template(identity, hand, 0, attempt, { elementType })).toString('base64url'), '/c', rules, hand)

  it("gives referenceTemplate's bytes for int8 and float32 captures, and refuses captures of two palms", () => {
    let agreed = 0
    for (const elementType of ['int8', 'float32'] as const) {
      for (let identity = 0; identity < 300; identity++) {
        const enroll = capture(identity, 'left', 0, elementType)
        const identify = capture(identity, 'left', 1, elementType)
        const a = Float64Array.from(decodeTemplate(enroll.bytes).vector)
        const b = Float64Array.from(decodeTemplate(identify.bytes).vector)
        const cosine = a.reduce((sum, value, index) => sum + value * b[index], 0) / Math.hypot(...a) / Math.hypot(...b)
        const threshold = 0.8
        if (cosine < threshold - 1e-9) {
          expect(() => agreedReference(enroll, identify, threshold, '/left_hand')).toThrow(/disagree/)
          continue
        }
        if (cosine < threshold + 1e-9) continue
        expect([...agreedReference(enroll, identify, threshold, '/left_hand')]).toEqual([...referenceTemplate([enroll, identify], '/left_hand')])
        agreed += 1
      }
    }
    expect(agreed).toBeGreaterThan(400)
    const stranger = capture(1, 'left', 1, 'int8')
    expect(() => agreedReference(capture(0, 'left', 0, 'int8'), stranger, 0.8, '/left_hand')).toThrow(/disagree/)
  })
})
