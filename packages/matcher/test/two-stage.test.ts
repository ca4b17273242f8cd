// Partitions and two-stage search over every backend (native once per ISA the addon offers, so
// each popcount kernel is held to the TypeScript oracle): stage-1 candidate lists equal a brute
// force, stage-2 scores are the exact ones, partitions never leak rows, and the exactness
// audit counts a disagreement it is made to see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { availableBackends, loadNativeAddon, loadWasmModule, type BackendName } from '../src/backend.js'
import { createKernel, type Segment } from '../src/kernel.js'
import { createMatcher, type Matcher } from '../src/index.js'
import * as reference from '../src/reference.js'
import { allocateRegion, createSharedMemory } from '../src/shared-memory.js'
import { packSignBits, signBytesFor, writeSignBits } from '../src/sign-bits.js'
import { cosine, normSquared, randomInt8, rankIds } from './brute-force.js'

const backends = availableBackends()
const nativeAddon = loadNativeAddon()
const kernelVariants = backends.flatMap((backend): { name: string; backend: BackendName; isa?: string }[] =>
  backend === 'native' && nativeAddon.ok
    ? nativeAddon.value.availableIsas().map((isa) => ({ name: `native:${isa}`, backend, isa }))
    : [{ name: backend, backend }],
)

describe.each(kernelVariants)('$name two-stage kernels', ({ backend, isa }) => {
  let previousIsa: string | undefined
  beforeAll(() => {
    if (!isa || !nativeAddon.ok) return
    previousIsa = nativeAddon.value.activeIsa()
    nativeAddon.value.setIsa(isa)
  })
  afterAll(() => {
    if (previousIsa && nativeAddon.ok) nativeAddon.value.setIsa(previousIsa)
  })

  it.each([
    [256, 300, 10],
    [128, 70, 64],
    [512, 33, 5],
    [40, 100, 7],
    [1000, 20, 3],
  ])('d=%i, %i rows, c=%i: stage 1 keeps the nearest live rows by sign bits, stage 2 scores them exactly', (dimension, rowCount, c) => {
    const memory = createSharedMemory(16 << 20)
    const wasm = backend === 'wasm' ? loadWasmModule() : undefined
    const kernel = createKernel(backend, memory, { addon: nativeAddon.ok ? nativeAddon.value : undefined, wasmModule: wasm?.ok ? wasm.value : undefined })
    const signBytes = signBytesFor(dimension)
    const stride = Math.ceil(dimension / 64) * 64
    const rowsAt = allocateRegion(memory, rowCount * (stride + 4 + signBytes + 1))
    const normsAt = rowsAt + rowCount * stride
    const bitsAt = normsAt + rowCount * 4
    const liveAt = bitsAt + rowCount * signBytes
    const buffer = memory.buffer as unknown as SharedArrayBuffer
    const vectors = Array.from({ length: rowCount }, (_, row) => randomInt8(row % 6 === 5 ? 3 : row + 7, dimension))
    vectors.forEach((vector, row) => new Int8Array(buffer, rowsAt + row * stride, dimension).set(vector))
    new Uint32Array(buffer, normsAt, rowCount).set(vectors.map(normSquared))
    const packed = new Int8Array(rowCount * dimension)
    vectors.forEach((vector, row) => packed.set(vector, row * dimension))
    const bits = packSignBits(packed, dimension, rowCount)
    new Uint8Array(buffer, bitsAt, bits.length).set(bits)
    const live = new Uint8Array(buffer, liveAt, rowCount)
    live.set(vectors.map((_, row) => (row % 4 === 1 ? 0 : 1)))
    // The chunk's row 0 is absolute row 1000; rows 2.. in two segments, the later one first (so
    // rows of equal distance and lower row arrive after the lists hold higher ones).
    const baseRow = 1000
    const middle = Math.floor(rowCount / 2)
    const chunk = { rowsOffset: rowsAt, normsOffset: normsAt, bitsOffset: bitsAt, liveOffset: liveAt, capacity: rowCount, baseRow }
    const segments: Segment[] = [
      { ...chunk, rowStart: middle, rowEnd: rowCount },
      { ...chunk, rowStart: 2, rowEnd: middle },
    ]
    const segment: Segment = { ...chunk, rowStart: 2, rowEnd: rowCount }
    const shape = { dimension, strideInBytes: stride, signBytes }
    const probes = [randomInt8(3, dimension), randomInt8(4242, dimension), new Int8Array(dimension).fill(-127)]
    const probeVectors = new Int8Array(probes.length * dimension)
    probes.forEach((probe, index) => probeVectors.set(probe, index * dimension))
    const probeBits = packSignBits(probeVectors, dimension, probes.length)
    const outRows = new Int32Array(probes.length * c).fill(-1)
    const outDistances = new Uint32Array(probes.length * c).fill(0xffffffff)
    for (const piece of segments) kernel.nearest(piece, shape, probeBits, c, outRows, outDistances)
    probes.forEach((_, probe) => {
      const expected = vectors
        .map((_, row) => row)
        .filter((row) => row >= 2 && live[row] === 1)
        .map((row) => ({ row: baseRow + row, distance: reference.hammingDistance(bits, row * signBytes, probeBits, probe * signBytes, signBytes) }))
        .sort((a, b) => a.distance - b.distance || a.row - b.row)
        .slice(0, c)
      const got = Array.from({ length: c }, (_, slot) => ({ row: outRows[probe * c + slot], distance: outDistances[probe * c + slot] })).filter(
        (entry) => entry.row >= 0,
      )
      expect(got).toEqual(expected)
      for (let slot = probe * c + got.length; slot < (probe + 1) * c; slot++) expect(outDistances[slot]).toBe(0xffffffff)
    })
    const pairRows = outRows.filter((row) => row >= 0).map((row) => row - baseRow)
    const pairProbes = Uint32Array.from(Array.from(outRows).flatMap((row, slot) => (row >= 0 ? [Math.floor(slot / c)] : [])))
    const scores = new Float64Array(pairRows.length)
    kernel.scorePairs(segment, shape, pairRows, pairProbes, probeVectors, Uint32Array.from(probes, normSquared), scores)
    pairRows.forEach((row, pair) => expect(scores[pair]).toBe(cosine(probes[pairProbes[pair]], vectors[row])))
  })
})

describe.each(backends)('%s matcher: partitions and two-stage search', (backend) => {
  let matcher: Matcher
  let disagreements: string[] = []
  beforeAll(async () => {
    // chunkRows 64 spreads every gallery over several chunks and both workers.
    matcher = await createMatcher({
      dimension: 128,
      threads: 2,
      backend,
      chunkRows: 64,
      inlineBelowRows: 0,
      maxMemoryBytes: 256 << 20,
      exactAudit: { rate: 1, onDisagreement: (twoStage, exact) => disagreements.push(`${twoStage[0]?.id} != ${exact[0]?.id}`) },
    })
  })
  afterAll(async () => {
    await matcher?.close()
  })

  interface Row {
    id: string
    partition: 'left' | 'right'
    vector: Int8Array
  }
  /** The brute force over rows that carry a partition: score desc, id asc, partition asc. */
  function ranked(probe: Int8Array, rows: readonly Row[], k: number) {
    return rows
      .map(({ id, partition, vector }) => ({ id, score: cosine(probe, vector), partition }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) || (a.partition < b.partition ? -1 : 1))
      .slice(0, k)
  }

  /** Members m0.. with a left and a right row each: the same id in both partitions. */
  function fill(size: number) {
    const gallery = matcher.createGallery()
    const rows: Row[] = []
    for (let index = 0; index < size; index++) {
      for (const hand of ['left', 'right'] as const) {
        const vector = randomInt8(hand === 'left' ? index + 1 : index + 100_001, 128)
        gallery.upsert(`m${index}`, vector, { partition: hand })
        rows.push({ id: `m${index}`, partition: hand, vector })
      }
    }
    return { gallery, rows, of: (hand: string) => rows.filter((row) => row.partition === hand) }
  }

  it('a partition search returns only that partition, like the brute force over it; no partition searches all', async () => {
    const { gallery, rows, of } = fill(150)
    expect(gallery.size).toBe(300)
    expect(gallery.partitionsOf('m7')).toEqual(['left', 'right'])
    expect(gallery.partitionsOf('m150')).toEqual([])
    // The probe is exactly a right row's vector: a left search must not find it.
    const probe = randomInt8(100_001 + 42, 128)
    const left = await gallery.search(probe, { k: 20, partition: 'left' })
    expect(left).toEqual(ranked(probe, of('left'), 20))
    expect(left.every((hit) => hit.partition === 'left')).toBe(true)
    expect(await gallery.search(probe, { k: 20, partition: 'right' })).toEqual(ranked(probe, of('right'), 20))
    expect((await gallery.search(probe, { partition: 'right' }))[0]).toEqual({ id: 'm42', score: 1, partition: 'right' })
    expect(await gallery.search(probe, { k: 20 })).toEqual(ranked(probe, rows, 20))
    expect(await gallery.search(probe, { partition: 'palm' })).toEqual([])
    // Ids are per partition: replacing or removing m42's left row leaves its right row alone.
    gallery.upsert('m42', probe, { partition: 'left' })
    expect(await gallery.search(probe, { k: 2 })).toEqual([
      { id: 'm42', score: 1, partition: 'left' },
      { id: 'm42', score: 1, partition: 'right' },
    ])
    expect(gallery.remove('m42', { partition: 'right' })).toBe(true)
    expect(gallery.has('m42', { partition: 'right' })).toBe(false)
    expect(gallery.has('m42')).toBe(true)
    expect(gallery.size).toBe(299)
    expect(gallery.remove('m43')).toBe(true)
    expect(gallery.partitionsOf('m43')).toEqual([])
    expect(gallery.size).toBe(297)
    await expect(gallery.search(probe, { partition: '' })).rejects.toThrow(TypeError)
    expect(() => gallery.upsert('x', probe, { partition: 'x'.repeat(65) })).toThrow(TypeError)
  })

  it('a search of several partitions reads those only, merged like the brute force over them', async () => {
    const { gallery, rows } = fill(60)
    for (let index = 0; index < 60; index++) gallery.upsert(`m${index}`, randomInt8(index + 200_001, 128), { partition: 'left.1' })
    const probe = randomInt8(200_001 + 7, 128)
    const shardOne = rows.filter((row) => row.partition === 'left').map((row) => ({ ...row, partition: 'left' as const }))
    const both = await gallery.search(probe, { k: 10, partitions: ['right', 'left.1'] })
    expect(both[0]).toEqual({ id: 'm7', score: 1, partition: 'left.1' })
    expect(both.every((hit) => hit.partition === 'right' || hit.partition === 'left.1')).toBe(true)
    expect(await gallery.search(probe, { k: 10, partitions: ['left'] })).toEqual(ranked(probe, shardOne, 10))
    expect(await gallery.search(probe, { k: 10, partitions: ['left', 'left', 'nowhere'] })).toEqual(ranked(probe, shardOne, 10))
    expect(await gallery.search(probe, { k: 5, partitions: ['left', 'right', 'left.1'] })).toEqual(await gallery.search(probe, { k: 5 }))
    await expect(gallery.search(probe, { partitions: [] })).rejects.toThrow(TypeError)
    await expect(gallery.search(probe, { partition: 'left', partitions: ['right'] })).rejects.toThrow(/partition or partitions/)
  })

  it('two-stage returns exact scores, finds what exact finds when c covers the gallery, and survives compaction', async () => {
    const { gallery, rows } = fill(120)
    const vectorOf = (id: string, partition?: string) => rows.find((row) => row.id === id && row.partition === partition)!.vector
    const probes = [randomInt8(5, 128), randomInt8(100_050, 128), randomInt8(77_777, 128)]
    for (const probe of probes) {
      const hits = await gallery.search(probe, { k: 5, mode: 'two_stage', candidates: 8 })
      expect(hits).toHaveLength(5)
      for (const hit of hits) expect(hit.score).toBe(cosine(probe, vectorOf(hit.id, hit.partition)))
      expect(await gallery.search(probe, { k: 5, mode: 'two_stage', candidates: 300 })).toEqual(ranked(probe, rows, 5))
    }
    for (let index = 0; index < 120; index += 2) expect(gallery.remove(`m${index}`, { partition: 'left' })).toBe(true)
    const left = rows.filter((row) => !(row.partition === 'left' && Number(row.id.slice(1)) % 2 === 0))
    const before = await gallery.searchBatch(probes, { k: 7, mode: 'two_stage', candidates: 300 })
    await gallery.compact()
    expect(gallery.deadRows).toBe(0)
    expect(await gallery.searchBatch(probes, { k: 7, mode: 'two_stage', candidates: 300 })).toEqual(before)
    probes.forEach((probe, index) => expect(before[index]).toEqual(ranked(probe, left, 7)))
    // A mated probe (a row's own vector) is found by the sign bits even with few candidates.
    expect((await gallery.search(randomInt8(100_050, 128), { mode: 'two_stage', candidates: 1 }))[0]).toEqual({ id: 'm49', score: 1, partition: 'right' })
  })

  it('the exactness audit counts the disagreement a tiny c induces', async () => {
    disagreements = []
    const { gallery } = fill(200)
    // With c = 1 per worker, stage 1 keeps the nearest sign pattern, rarely the best cosine.
    const probes = Array.from({ length: 30 }, (_, index) => randomInt8(900_000 + index, 128))
    await gallery.searchBatch(probes, { mode: 'two_stage', candidates: 1 })
    await expect.poll(() => gallery.exactAudit.audited).toBe(30)
    expect(gallery.exactAudit.disagreements).toBeGreaterThan(0)
    expect(disagreements).toHaveLength(gallery.exactAudit.disagreements)
    // Exact searches are never audited.
    await gallery.search(probes[0])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(gallery.exactAudit.audited).toBe(30)
  })

  it('auto is two-stage only from twoStageFromRows, and bad options are refused', async () => {
    const small = await createMatcher({ dimension: 128, threads: 0, backend, twoStageFromRows: 100, candidates: 1 })
    try {
      const gallery = small.createGallery()
      const vectors = new Map<string, Int8Array>()
      for (let index = 0; index < 99; index++) {
        gallery.upsert(`a${index}`, randomInt8(index + 1, 128))
        vectors.set(`a${index}`, randomInt8(index + 1, 128))
      }
      const probes = Array.from({ length: 20 }, (_, index) => randomInt8(5_000 + index, 128))
      // 99 rows: auto is exact.
      const auto = await gallery.searchBatch(probes, { mode: 'auto' })
      probes.forEach((probe, index) => expect(auto[index]).toEqual(rankIds(probe, vectors, 1)))
      gallery.upsert('a99', randomInt8(100, 128))
      // 100 rows: auto is two-stage with c = 1, which now misses some best rows.
      expect(await gallery.searchBatch(probes, { mode: 'auto' })).toEqual(await gallery.searchBatch(probes, { mode: 'two_stage' }))
      await expect(gallery.search(probes[0], { mode: 'fast' as 'exact' })).rejects.toThrow(/mode must be one of/)
      await expect(gallery.search(probes[0], { mode: 'two_stage', candidates: 0 })).rejects.toThrow(/candidates must be/)
      await expect(gallery.search(probes[0], { k: small.maxK + 1 })).rejects.toThrow(RangeError)
    } finally {
      await small.close()
    }
    await expect(createMatcher({ dimension: 128, threads: 0, backend, candidates: 0 })).rejects.toThrow(/candidates/)
  })
})

describe('dimension limits', () => {
  it.runIf(nativeAddon.ok)('native refuses dimensions its kernels cannot scan; auto then falls back with a note', async () => {
    const { maxDimension } = nativeAddon.ok ? nativeAddon.value.limits() : { maxDimension: 0 }
    await expect(createMatcher({ dimension: maxDimension + 1, threads: 0, backend: 'native' })).rejects.toThrow(/at most 4096 dimensions/)
    const lines: string[] = []
    const matcher = await createMatcher({ dimension: maxDimension + 1, threads: 0, backend: 'auto', logger: (line) => lines.push(line) })
    expect(matcher.backend.name).not.toBe('native')
    expect(lines[0]).toMatch(/native unavailable \(its kernels scan at most 4096 dimensions, not 4097\)/)
    await matcher.close()
  })
})

describe('PALMVEIN_MATCHER_ISA', () => {
  it.runIf(nativeAddon.ok)("an unknown or unavailable name is ignored with the core's warning; the isa option must be valid", async () => {
    const previous = process.env.PALMVEIN_MATCHER_ISA
    const best = nativeAddon.ok ? nativeAddon.value.availableIsas()[0] : ''
    process.env.PALMVEIN_MATCHER_ISA = 'sse9'
    try {
      const lines: string[] = []
      const matcher = await createMatcher({ dimension: 128, threads: 0, backend: 'native', logger: (line) => lines.push(line) })
      expect(matcher.backend.isa).toBe(best)
      expect(lines[0]).toBe(`palmvein matcher: PALMVEIN_MATCHER_ISA="sse9" is not an ISA (avx512vnni, avxvnni, avx2, neon, scalar); ignored, using ${best}`)
      await matcher.close()
      process.env.PALMVEIN_MATCHER_ISA = 'scalar'
      const scalar = await createMatcher({ dimension: 128, threads: 0, backend: 'native' })
      expect(scalar.backend).toEqual({ name: 'native', isa: 'scalar', popcountIsa: 'scalar' })
      await scalar.close()
      await expect(createMatcher({ dimension: 128, threads: 0, backend: 'native', isa: 'sse9' })).rejects.toThrow(/unknown ISA "sse9"/)
    } finally {
      if (previous === undefined) delete process.env.PALMVEIN_MATCHER_ISA
      else process.env.PALMVEIN_MATCHER_ISA = previous
      if (nativeAddon.ok) nativeAddon.value.setIsa(best)
    }
  })
})

describe('sign bits', () => {
  it('set bit j % 8 of byte j / 8 exactly for the negative components, at every length, padding zero', () => {
    for (let length = 1; length <= 130; length++) {
      const vector = randomInt8(length * 7 + 1, length)
      const out = new Uint8Array(signBytesFor(length) + 2).fill(0xff)
      writeSignBits(vector, out, 1)
      const expected = new Uint8Array(signBytesFor(length))
      vector.forEach((value, index) => {
        if (value < 0) expected[index >> 3] |= 1 << (index % 8)
      })
      expect([out[0], ...out.subarray(1, 1 + expected.length), out[out.length - 1]]).toEqual([0xff, ...expected, 0xff])
    }
  })
})
