// One suite, every backend that loads here (native if the addon is built, wasm, js): the
// kernels and the full matcher must agree bit for bit with the float64 brute force.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { availableBackends, loadNativeAddon, loadWasmModule, type BackendName } from '../src/backend.js'
import { createKernel, type Segment } from '../src/kernel.js'
import { createMatcher, type Matcher } from '../src/index.js'
import { allocateRegion, createSharedMemory, type SharedMemory } from '../src/shared-memory.js'
import { createSyntheticPopulation } from '../src/synthetic.js'
import { normSquared, randomInt8, rankIds, rankRows } from './brute-force.js'

const backends = availableBackends()

describe('backend discovery', () => {
  it('always offers wasm (built by npm install) and js', () => {
    expect(backends).toContain('wasm')
    expect(backends).toContain('js')
  })
})

function kernelFor(backend: BackendName, memory: SharedMemory) {
  const addon = backend === 'native' ? loadNativeAddon() : undefined
  const wasmModule = backend === 'wasm' ? loadWasmModule() : undefined
  return createKernel(backend, memory, {
    addon: addon?.ok ? addon.value : undefined,
    wasmModule: wasmModule?.ok ? wasmModule.value : undefined,
  })
}

// The native backend once per ISA the addon offers on this CPU (setIsa is process-wide).
const nativeAddon = loadNativeAddon()
interface KernelVariant {
  name: string
  backend: BackendName
  isa?: string
}
const kernelVariants: KernelVariant[] = backends.flatMap((backend): KernelVariant[] =>
  backend === 'native' && nativeAddon.ok
    ? nativeAddon.value.availableIsas().map((isa) => ({ name: `native:${isa}`, backend, isa }))
    : [{ name: backend, backend }],
)

describe.each(kernelVariants)('$name kernel', ({ backend, isa }) => {
  let previousIsa: string | undefined
  beforeAll(() => {
    if (!isa || !nativeAddon.ok) return
    previousIsa = nativeAddon.value.activeIsa()
    expect(nativeAddon.value.setIsa(isa)).toBe(isa)
  })
  afterAll(() => {
    if (previousIsa && nativeAddon.ok) nativeAddon.value.setIsa(previousIsa)
  })

  // Awkward dimensions exercise the SIMD tails; stride is padded beyond the dimension.
  it.each([
    [256, 100, 5],
    [128, 33, 40],
    [512, 17, 3],
    [40, 64, 10],
    [255, 9, 1],
  ])('d=%i, %i rows, k=%i: same rows and bit-identical scores as the brute force', (dimension, rowCount, k) => {
    const memory = createSharedMemory(16 << 20)
    const kernel = kernelFor(backend, memory)
    const stride = Math.ceil(dimension / 64) * 64 + 64
    const base = allocateRegion(memory, rowCount * (stride + 5))
    const buffer = memory.buffer as unknown as SharedArrayBuffer
    const rowsView = new Int8Array(buffer, base, rowCount * stride)
    const norms = new Uint32Array(buffer, base + rowCount * stride, rowCount)
    const live = new Uint8Array(buffer, base + rowCount * stride + rowCount * 4, rowCount)
    const rows: (Int8Array | null)[] = []
    for (let row = 0; row < rowCount; row++) {
      // Every 7th row repeats row 0 (ties resolved by row), every 5th is dead.
      const vector = row % 7 === 3 ? randomInt8(1, dimension) : randomInt8(row + 1, dimension)
      if (row % 11 === 4) vector.fill(127)
      if (row % 13 === 6) vector.fill(-127)
      rowsView.set(vector, row * stride)
      norms[row] = normSquared(vector)
      live[row] = row % 5 === 2 ? 0 : 1
      rows.push(live[row] ? vector : null)
    }
    const probes = [randomInt8(1, dimension), randomInt8(999, dimension), new Int8Array(dimension).fill(-127)]
    const packed = new Int8Array(probes.length * dimension)
    probes.forEach((probe, index) => packed.set(probe, index * dimension))
    const segment: Segment = {
      rowsOffset: base,
      normsOffset: base + rowCount * stride,
      liveOffset: base + rowCount * stride + rowCount * 4,
      bitsOffset: 0,
      capacity: rowCount,
      rowStart: 0,
      rowEnd: rowCount,
      baseRow: 0,
    }
    const outRows = new Int32Array(probes.length * k)
    const outScores = new Float64Array(probes.length * k)
    kernel.scan(segment, { dimension, strideInBytes: stride, signBytes: 8 }, packed, Uint32Array.from(probes, normSquared), k, outRows, outScores)
    probes.forEach((probe, index) => {
      const expected = rankRows(probe, rows, k)
      const got = Array.from({ length: k }, (_, slot) => ({ row: outRows[index * k + slot], score: outScores[index * k + slot] })).filter(
        (entry) => entry.row >= 0,
      )
      expect(got).toEqual(expected)
    })
    // A sub-range only sees its own rows.
    const [from, to] = [Math.min(rowCount, 10), Math.min(rowCount, 20)]
    kernel.scan(
      { ...segment, rowStart: from, rowEnd: to },
      { dimension, strideInBytes: stride, signBytes: 8 },
      packed.subarray(0, dimension),
      Uint32Array.of(normSquared(probes[0])),
      k,
      outRows,
      outScores,
    )
    const expectedRange = rankRows(
      probes[0],
      rows.map((row, index) => (index >= from && index < to ? row : null)),
      k,
    )
    expect(Array.from(outRows.subarray(0, k)).filter((row) => row >= 0)).toEqual(expectedRange.map((entry) => entry.row))
  })
})

describe.each(backends)('%s matcher', (backend) => {
  let pooled: Matcher
  let inline: Matcher
  beforeAll(async () => {
    // chunkRows 64 makes every gallery span several chunks; inlineBelowRows 0 forces the pool.
    pooled = await createMatcher({ dimension: 128, threads: 2, backend, chunkRows: 64, inlineBelowRows: 0, maxMemoryBytes: 256 << 20 })
    inline = await createMatcher({ dimension: 128, threads: 0, backend, chunkRows: 64, maxMemoryBytes: 256 << 20 })
  })
  afterAll(async () => {
    await pooled?.close()
    await inline?.close()
  })

  it('reports the backend it was asked for', () => {
    expect(pooled.backend.name).toBe(backend)
    expect(inline.backend.name).toBe(backend)
    expect(pooled.backend.isa.length).toBeGreaterThan(0)
  })

  it.each([
    [1, 1],
    [7, 3],
    [63, 5],
    [65, 64],
    [200, 1],
    [301, 500],
  ])('%i rows, k=%i: ids and scores equal the brute force (ties by id)', async (size, k) => {
    for (const matcher of [pooled, inline]) {
      const gallery = matcher.createGallery()
      const vectors = new Map<string, Int8Array>()
      for (let index = 0; index < size; index++) {
        // Ids inserted in descending order, some sharing a vector: the id tie-break must win.
        const id = `id-${String(size - index).padStart(4, '0')}`
        const vector = randomInt8(index % 9 === 4 ? 4 : index + 100, 128)
        gallery.upsert(id, vector)
        vectors.set(id, vector)
      }
      expect(gallery.size).toBe(size)
      const probes = [randomInt8(4, 128), randomInt8(77, 128), randomInt8(101, 128)]
      const results = await gallery.searchBatch(probes, { k })
      probes.forEach((probe, index) => expect(results[index]).toEqual(rankIds(probe, vectors, k)))
      expect(await gallery.search(probes[1], { k })).toEqual(rankIds(probes[1], vectors, k))
    }
  })

  it('a batch of 17 probes over five chunks: each result equals the brute force (each chunk starts from the best found so far)', async () => {
    const gallery = inline.createGallery()
    const vectors = new Map<string, Int8Array>()
    for (let index = 0; index < 300; index++) {
      // Every 11th row repeats a vector of an earlier chunk under a lower id: ties across chunks
      // that the later row wins.
      const vector = randomInt8(index >= 70 && index % 11 === 10 ? index - 70 + 500 : index + 500, 128)
      const id = `id-${String(300 - index).padStart(4, '0')}`
      gallery.upsert(id, vector)
      vectors.set(id, vector)
    }
    const probes = Array.from({ length: 17 }, (_, index) => randomInt8(index * 37 + 500, 128))
    const results = await gallery.searchBatch(probes, { k: 4 })
    probes.forEach((probe, index) => expect(results[index]).toEqual(rankIds(probe, vectors, 4)))
  })

  it('matches synthetic captures like the brute force, through float32 and PVT1 input', async () => {
    const population = createSyntheticPopulation({ seed: 3, dimension: 128, identities: 150 })
    const gallery = pooled.createGallery()
    const vectors = new Map<string, Int8Array>()
    for (let identity = 0; identity < 150; identity++) {
      for (const hand of ['left', 'right'] as const) {
        const id = `member-${identity}:${hand}`
        gallery.upsert(id, identity % 2 ? population.template(identity, hand) : population.capture(identity, hand))
        vectors.set(id, population.captureInt8(identity, hand))
      }
    }
    const probes = Array.from({ length: 20 }, (_, index) => population.captureInt8(index * 7, 'left', 1, 1))
    const results = await Promise.all(probes.map((probe) => gallery.search(probe, { k: 4 })))
    probes.forEach((probe, index) => expect(results[index]).toEqual(rankIds(probe, vectors, 4)))
    expect(results.filter((hits, index) => hits[0].id === `member-${index * 7}:left`).length).toBeGreaterThan(15)
  })

  it('returns nothing from an empty or all-dead gallery', async () => {
    const gallery = pooled.createGallery()
    expect(await gallery.search(randomInt8(1, 128))).toEqual([])
    for (let index = 0; index < 100; index++) gallery.upsert(`x${index}`, randomInt8(index + 1, 128))
    for (let index = 0; index < 100; index++) expect(gallery.remove(`x${index}`)).toBe(true)
    expect(gallery.remove('x0')).toBe(false)
    expect(gallery.size).toBe(0)
    expect(await gallery.search(randomInt8(1, 128), { k: 10 })).toEqual([])
  })

  it('replaces on upsert and keeps results identical across compaction', async () => {
    const gallery = pooled.createGallery()
    const vectors = new Map<string, Int8Array>()
    for (let index = 0; index < 400; index++) {
      gallery.upsert(`r${index}`, randomInt8(index + 1, 128))
      vectors.set(`r${index}`, randomInt8(index + 1, 128))
    }
    for (let index = 0; index < 400; index += 3) {
      gallery.remove(`r${index}`)
      vectors.delete(`r${index}`)
    }
    gallery.upsert('r1', randomInt8(5000, 128))
    vectors.set('r1', randomInt8(5000, 128))
    const probes = [randomInt8(5000, 128), randomInt8(9, 128), randomInt8(123, 128)]
    const before = await gallery.searchBatch(probes, { k: 12 })
    probes.forEach((probe, index) => expect(before[index]).toEqual(rankIds(probe, vectors, 12)))
    expect(gallery.deadRows).toBeGreaterThan(0)
    await gallery.compact()
    expect(gallery.deadRows).toBe(0)
    expect(gallery.size).toBe(vectors.size)
    expect(await gallery.searchBatch(probes, { k: 12 })).toEqual(before)
    // vector() reads each id's row back, after the moves of compaction too.
    for (const [id, vector] of vectors) expect(gallery.vector(id)).toEqual(vector)
    expect(gallery.vector('r0')).toBeUndefined()
    gallery.upsert('hand', randomInt8(77, 128), { partition: 'left' })
    expect(gallery.vector('hand', { partition: 'left' })).toEqual(randomInt8(77, 128))
    expect(gallery.vector('hand', { partition: 'right' })).toBeUndefined()
    gallery.upsert('after', randomInt8(9, 128))
    expect((await gallery.search(randomInt8(9, 128)))[0]).toEqual({ id: 'after', score: 1 })
  })

  it('never returns an id once remove() has returned, under concurrent upserts and searches', async () => {
    const gallery = pooled.createGallery()
    for (let index = 0; index < 600; index++) gallery.upsert(`c${index}`, randomInt8(index + 1, 128))
    const removed = new Set<string>()
    const checks: Promise<void>[] = []
    for (let round = 0; round < 120; round++) {
      const victim = `c${round * 5}`
      const exact = randomInt8(round * 5 + 1, 128)
      // Started before the remove: its scan still sees the row, the merge must drop it.
      const inFlight = gallery.search(exact, { k: 3 })
      expect(gallery.remove(victim)).toBe(true)
      removed.add(victim)
      const snapshot = new Set(removed)
      checks.push(
        inFlight.then((hits) => {
          for (const hit of hits) expect(snapshot.has(hit.id)).toBe(false)
        }),
      )
      gallery.upsert(`n${round}`, randomInt8(10_000 + round, 128))
      checks.push(
        gallery.search(randomInt8(round + 2, 128), { k: 5 }).then((hits) => {
          for (const hit of hits) expect(snapshot.has(hit.id)).toBe(false)
        }),
      )
      if (round % 40 === 39) checks.push(gallery.compact())
      if (round % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 1))
    }
    await Promise.all(checks)
    expect(gallery.size).toBe(600)
  })

  it('refuses bad probes and bad k with a clear error', async () => {
    const gallery = inline.createGallery()
    gallery.upsert('a', randomInt8(1, 128))
    await expect(gallery.search(new Int8Array(128))).rejects.toMatchObject({ code: 'zero_vector' })
    await expect(gallery.search(new Int8Array(64).fill(1))).rejects.toMatchObject({ code: 'dimension_mismatch' })
    await expect(gallery.search(new Int8Array(128).fill(-128))).rejects.toMatchObject({ code: 'element_out_of_range' })
    await expect(gallery.search(new Float32Array(128).fill(Number.NaN))).rejects.toMatchObject({ code: 'non_finite' })
    await expect(gallery.search(randomInt8(1, 128), { k: 0 })).rejects.toThrow(RangeError)
    expect(() => gallery.upsert('b', new Uint8Array(10))).toThrow(expect.objectContaining({ code: 'bad_length' }))
  })
})

describe('backend choice', () => {
  it('PALMVEIN_MATCHER_BACKEND forces a backend when the option says auto', async () => {
    const previous = process.env.PALMVEIN_MATCHER_BACKEND
    process.env.PALMVEIN_MATCHER_BACKEND = 'js'
    try {
      const lines: string[] = []
      const matcher = await createMatcher({ dimension: 128, threads: 0, logger: (line) => lines.push(line) })
      expect(matcher.backend).toEqual({ name: 'js', isa: 'scalar', popcountIsa: 'scalar' })
      expect(lines).toEqual(['matcher backend js (scalar), 0 worker thread(s)'])
      await matcher.close()
      process.env.PALMVEIN_MATCHER_BACKEND = 'gpu'
      await expect(createMatcher({ dimension: 128, threads: 0 })).rejects.toThrow(/PALMVEIN_MATCHER_BACKEND/)
    } finally {
      if (previous === undefined) delete process.env.PALMVEIN_MATCHER_BACKEND
      else process.env.PALMVEIN_MATCHER_BACKEND = previous
    }
  })

  it('auto picks the best backend that loads', async () => {
    const matcher = await createMatcher({ dimension: 256, threads: 0, backend: 'auto' })
    expect(matcher.backend.name).toBe(
      process.env.PALMVEIN_MATCHER_BACKEND && process.env.PALMVEIN_MATCHER_BACKEND !== 'auto' ? process.env.PALMVEIN_MATCHER_BACKEND : backends[0],
    )
    await matcher.close()
  })
})
