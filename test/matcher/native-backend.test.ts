// CI proves the native path: where the addon was built (always under PALMVEIN_REQUIRE_NATIVE=1,
// which .ci/run sets), createMatcher's automatic choice is native, never a silent WASM fallback.
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadNativeAddon, NATIVE_ADDON_PATH } from '../../src/matcher/backend.js'
import { createMatcher } from '../../src/matcher/index.js'

const built = fs.existsSync(NATIVE_ADDON_PATH)

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
})
