import { describe, expect, it } from 'vitest'
import { decodeTemplate } from '../src/template.js'
import { createSyntheticPopulation } from '../src/synthetic.js'

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index], 0)

describe('synthetic population', () => {
  it('is deterministic for a seed, whatever the order of requests', () => {
    const first = createSyntheticPopulation({ seed: 11, dimension: 128, identities: 50 })
    const second = createSyntheticPopulation({ seed: 11, dimension: 128, identities: 50 })
    const a = [first.capture(3, 'left', 1, 2), first.capture(40, 'right')]
    const b = [second.capture(40, 'right'), second.capture(3, 'left', 1, 2)].reverse()
    expect([...a[0]]).toEqual([...b[0]])
    expect([...a[1]]).toEqual([...b[1]])
    const other = createSyntheticPopulation({ seed: 12, dimension: 128, identities: 50 })
    expect([...other.capture(3, 'left', 1, 2)]).not.toEqual([...a[0]])
  })

  it('gives unit-norm captures whose mated scores clearly exceed non-mated ones', () => {
    const population = createSyntheticPopulation({ seed: 5, dimension: 256, identities: 200 })
    let mated = 0
    let nonMated = 0
    for (let identity = 0; identity < 200; identity++) {
      const enrolled = population.capture(identity, 'left', 0)
      expect(dot(enrolled, enrolled)).toBeCloseTo(1, 5)
      mated += dot(enrolled, population.capture(identity, 'left', 1, 1))
      nonMated += dot(enrolled, population.capture((identity + 1) % 200, 'left', 1, 1))
    }
    expect(mated / 200).toBeGreaterThan(0.8)
    expect(Math.abs(nonMated / 200)).toBeLessThan(0.1)
  })

  it('makes hard identities noisier and related identities look alike', () => {
    const population = createSyntheticPopulation({ seed: 9, dimension: 256, identities: 400, hardFraction: 0.2, relatedFraction: 0.1, relatedSimilarity: 0.8 })
    const profiles = Array.from({ length: 400 }, (_, identity) => population.profile(identity))
    const hard = profiles.filter((profile) => profile.hard)
    const easy = profiles.filter((profile) => !profile.hard)
    expect(hard.length).toBeGreaterThan(40)
    const meanNoise = (list: typeof profiles) => list.reduce((sum, profile) => sum + profile.noise, 0) / list.length
    expect(meanNoise(hard)).toBeGreaterThan(1.5 * meanNoise(easy))
    const related = profiles.filter((profile) => profile.relatedTo !== null)
    expect(related.length).toBeGreaterThan(20)
    for (const profile of related.slice(0, 5)) {
      expect(dot(population.centre(profile.identity, 'right'), population.centre(profile.relatedTo!, 'right'))).toBeCloseTo(0.8, 5)
    }
  })

  it('encodes captures as valid PVT1 templates', () => {
    const population = createSyntheticPopulation({ seed: 1, dimension: 512, identities: 3, extractorId: 4 })
    const template = decodeTemplate(population.template(2, 'right', 0, 0, { quality: 70 }), { dimension: 512 })
    expect(template).toMatchObject({ elementType: 'float32', extractorId: 4, hand: 'right', quality: 70 })
    expect(decodeTemplate(population.template(2, 'left', 0, 0, { elementType: 'int8' })).elementType).toBe('int8')
  })

  it('refuses a dimension that is not a power of two', () => {
    expect(() => createSyntheticPopulation({ seed: 1, dimension: 100, identities: 1 })).toThrow(RangeError)
  })
})
