// Captures built by the client are the bytes the service's own tools write and its decoder takes.
import { captureFromVector, syntheticCapture } from '@palmvein/client'
import { decodeTemplate, TemplateError } from '@palmvein/matcher'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/** `palmvein capture --synthetic ...` run from the service's source, as a user runs it. */
const cliCapture = (args: string[]) =>
  execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url)), 'capture', '--synthetic', ...args], {
    encoding: 'utf8',
  }).trim()

describe('syntheticCapture', () => {
  it('is `palmvein capture --synthetic` (same defaults: dimension 256, seed 7, extractor 1)', () => {
    expect(syntheticCapture({ identity: 1, hand: 'left', session: 0, attempt: 1 })).toBe(cliCapture(['--identity', '1', '--hand', 'left', '--attempt', '1']))
    expect(syntheticCapture({ identity: 40, hand: 'right', session: 3, attempt: 0 })).toBe(
      cliCapture(['--identity', '40', '--hand', 'right', '--session', '3']),
    )
    expect(syntheticCapture({ identity: 2, hand: 'left', dimension: 512, seed: 9, extractorId: 4 })).toBe(
      cliCapture(['--identity', '2', '--hand', 'left', '--dimension', '512', '--seed', '9', '--extractor-id', '4']),
    )
  }, 60_000)
})

describe('captureFromVector', () => {
  it('encodes float and int8 vectors as base64url PVT1 the decoder reads back', () => {
    const floats = Array.from({ length: 128 }, (_, index) => Math.sin(index + 1))
    const text = captureFromVector(floats, { hand: 'right', quality: 70, extractorId: 3, extractorVersion: 2 })
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/)
    const decoded = decodeTemplate(Buffer.from(text, 'base64url'))
    expect(decoded).toMatchObject({ elementType: 'float32', dimension: 128, hand: 'right', quality: 70, extractorId: 3, extractorVersion: 2 })
    expect(Array.from(decoded.vector)).toEqual(Array.from(Float32Array.from(floats)))
    const int8 = Int8Array.from({ length: 256 }, (_, index) => (index % 7) - 3)
    expect(decodeTemplate(Buffer.from(captureFromVector(int8), 'base64url'))).toMatchObject({ elementType: 'int8', hand: null, quality: null, vector: int8 })
  })

  it("refuses what PVT1 cannot hold with the matcher's TemplateError code", () => {
    const code = (build: () => string) => {
      try {
        build()
      } catch (error) {
        expect(error).toBeInstanceOf(TemplateError)
        return (error as TemplateError).code
      }
      return 'accepted'
    }
    expect(code(() => captureFromVector(new Float32Array(256)))).toBe('zero_vector')
    expect(code(() => captureFromVector(new Float32Array(100).fill(1)))).toBe('bad_dimension')
    expect(code(() => captureFromVector([Number.NaN, ...new Array(127).fill(1)]))).toBe('non_finite')
    expect(code(() => captureFromVector(new Float32Array(128).fill(1), { quality: 101 }))).toBe('bad_quality')
  })
})
