// CI proves the native path: where the addon was built (always under PALMVEIN_REQUIRE_NATIVE=1,
// which .ci/run sets), createMatcher's automatic choice is native, never a silent WASM fallback.
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadNativeAddon, NATIVE_ADDON_PATH } from '../src/backend.js'
import { createMatcher } from '../src/index.js'
import { createSharedMemory, createSlabMemory, MemoryViews, type NativePages } from '../src/shared-memory.js'

const built = fs.existsSync(NATIVE_ADDON_PATH)

/** Bytes of this process's anonymous memory in transparent huge pages (Linux). */
function anonymousHugePageBytes(): number {
  const line = fs
    .readFileSync('/proc/self/smaps_rollup', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('AnonHugePages:'))
  return Number(line?.match(/(\d+) kB/)?.[1] ?? 0) * 1024
}

/** The bracketed choice in /sys/kernel/mm/transparent_hugepage/enabled: always, madvise or never. */
function hugePageMode(): string | undefined {
  try {
    return fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8').match(/\[(\w+)\]/)?.[1]
  } catch {
    return undefined
  }
}

describe('the native backend', () => {
  it('was built when CI requires it, and loads whenever it was built', () => {
    if (process.env.PALMVEIN_REQUIRE_NATIVE === '1') expect(built, `${NATIVE_ADDON_PATH} is missing: the native build fell back`).toBe(true)
    const loaded = loadNativeAddon()
    expect(loaded.ok, loaded.ok ? '' : loaded.reason).toBe(built)
  })

  it('is what the automatic choice picks when the addon was built, else wasm', async () => {
    const lines: string[] = []
    const matcher = await createMatcher({ dimension: 128, threads: 0, logger: (line) => lines.push(line) })
    try {
      const forced = process.env.PALMVEIN_MATCHER_BACKEND?.trim().toLowerCase()
      const expected = forced && forced !== 'auto' ? forced : built ? 'native' : 'wasm'
      expect(matcher.backend.name, lines.join('\n')).toBe(expected)
    } finally {
      await matcher.close()
    }
  })

  it('backs large galleries with huge pages where Linux leaves that to the program, small ones not', async () => {
    const addon = loadNativeAddon()
    if (!addon.ok) {
      expect(built).toBe(false)
      return
    }
    // Nothing 2 MiB-aligned inside 4 KiB: no advice.
    expect(addon.value.adviseHugePages(new Uint8Array(4096))).toBe(false)
    const mode = process.platform === 'linux' ? hugePageMode() : undefined
    // Chunks of 16 384 rows x 256: each chunk's region (4.7 MB) holds at least one aligned 2 MiB page.
    const matcher = await createMatcher({ dimension: 256, threads: 0, chunkRows: 16384 })
    const fill = async (rows: number) => {
      const gallery = matcher.createGallery()
      const row = new Int8Array(256)
      for (let index = 0; index < rows; index++) {
        row[index % 256] = (index % 255) - 127
        gallery.upsert(`m${index}`, row)
      }
      const [best] = await gallery.search(row, { k: 1 })
      expect(best.id).toBe(`m${rows - 1}`)
    }
    try {
      const start = mode ? anonymousHugePageBytes() : 0
      await fill(10000)
      const afterSmall = mode ? anonymousHugePageBytes() : 0
      await fill(60000)
      const afterLarge = mode ? anonymousHugePageBytes() : 0
      if (mode === 'madvise') expect(afterSmall - start, 'a one-chunk gallery got huge pages').toBeLessThan(2 << 20)
      // Chunks 2 and 3 of the large gallery are full (4 MB of rows each) after the advice.
      if (mode === 'madvise' || mode === 'always') expect(afterLarge - afterSmall).toBeGreaterThanOrEqual(4 << 20)
      else if (mode === 'never') expect(afterLarge).toBe(0)
      else expect(process.platform === 'linux' ? mode : 'not linux').not.toBe(undefined)
    } finally {
      await matcher.close()
    }
  })

  it('says how far a view is from an alignment, and refuses one that is not a power of two', () => {
    const addon = loadNativeAddon()
    if (!addon.ok) {
      expect(built).toBe(false)
      return
    }
    const bytes = new Uint8Array(4096)
    const first = addon.value.bytesToAlignment(bytes, 64)
    expect(first).toBeGreaterThanOrEqual(0)
    expect(first).toBeLessThan(64)
    for (const skip of [1, 15, 16, 63, 64, 100]) expect(addon.value.bytesToAlignment(bytes.subarray(skip), 64)).toBe((((first - skip) % 64) + 64) % 64)
    expect(addon.value.bytesToAlignment(bytes.subarray(first), 2 << 20) % 64).toBe(0)
    expect(() => addon.value.bytesToAlignment(bytes, 48)).toThrow(/power of two/)
  })

  it('starts every region on a cache line and every region of 2 MiB or more on a huge page, in slabs and in a wasm memory', () => {
    const addon = loadNativeAddon()
    if (!addon.ok) {
      expect(built).toBe(false)
      return
    }
    const pages: NativePages = { adviseHugePages: () => false, bytesToAlignment: (bytes, alignment) => addon.value.bytesToAlignment(bytes, alignment) }
    for (const memory of [createSlabMemory(8 * 2 ** 30, pages), createSharedMemory(1 << 30, pages)]) {
      const views = new MemoryViews(memory)
      // A small region first puts the next one off any 2 MiB boundary; the last needs a new slab.
      for (const bytes of [100, 5 << 20, 70_000, (2 << 20) + 1, 300, memory.slabs ? 1020 << 20 : 3 << 20]) {
        const view = views.uint8(memory.allocate(bytes), bytes)
        expect(addon.value.bytesToAlignment(view, 64), `${bytes} bytes`).toBe(0)
        if (bytes >= 2 << 20) expect(addon.value.bytesToAlignment(view, 2 << 20), `${bytes} bytes`).toBe(0)
      }
      if (memory.slabs) expect(memory.slabs.length).toBe(2)
    }
  })
})
