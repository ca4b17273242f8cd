// The arm64 addon's search smoke test, run by scripts/check-arm64.sh under qemu-aarch64 with an
// arm64 Node: for every kernel the addon offers there (NEON, scalar), exact and two-stage searches
// through @palmvein/matcher equal the TypeScript reference's, id for id and score for score.
// Usage: node arm64-smoke.mjs (from a directory whose node_modules holds @palmvein/matcher with
// the arm64 addon at native/palmvein_matcher.node).
import { createMatcher } from '@palmvein/matcher'
import { loadNativeAddon } from '@palmvein/matcher/backend'
import { createRandom } from '@palmvein/matcher/random'

const DIMENSION = 256
const ROWS = 3000
const random = createRandom(49)
const vector = () => Int8Array.from({ length: DIMENSION }, () => Math.round(Math.max(-127, Math.min(127, random.gaussian() * 40))))
const rows = Array.from({ length: ROWS }, vector)
// Half the probes are noisy copies of stored rows (a clear best hit), half unrelated.
const probes = Array.from({ length: 16 }, (_, index) =>
  index % 2 ? vector() : Int8Array.from(rows[index * 97], (value) => Math.max(-127, Math.min(127, value + Math.round(random.gaussian() * 8)))),
)
const searches = [
  { k: 10, mode: 'exact' },
  { k: 10, mode: 'two_stage', candidates: 64 },
]

async function run(options) {
  const matcher = await createMatcher({ dimension: DIMENSION, threads: 2, ...options })
  const gallery = matcher.createGallery()
  rows.forEach((row, index) => gallery.upsert(`row-${index}`, row))
  const results = []
  for (const search of searches) results.push(await gallery.searchBatch(probes, search))
  await matcher.close()
  return { backend: matcher.backend, results }
}

const addon = loadNativeAddon()
if (!addon.ok) throw new Error(`the arm64 addon does not load: ${addon.reason}`)
const isas = addon.value.availableIsas()
console.log(
  `[arm64] ${process.arch} Node ${process.version}; addon kernels ${isas.join(', ')}; active ${addon.value.activeIsa()}, popcount ${addon.value.activePopcountIsa()}`,
)
if (process.arch !== 'arm64') throw new Error(`this is ${process.arch}, not arm64`)
if (addon.value.activeIsa() !== 'neon' || !isas.includes('neon')) throw new Error('the NEON kernel is not the active one')

const reference = await run({ backend: 'js' })
let failures = 0
for (const isa of isas) {
  const started = performance.now()
  const native = await run({ backend: 'native', isa })
  if (native.backend.name !== 'native' || native.backend.isa !== isa) throw new Error(`asked for native ${isa}, got ${JSON.stringify(native.backend)}`)
  searches.forEach((search, index) => {
    const same = JSON.stringify(native.results[index]) === JSON.stringify(reference.results[index])
    if (!same) failures++
    console.log(
      `[arm64] native ${isa} (popcount ${native.backend.popcountIsa}), ${search.mode}: ${same ? 'equal to the reference' : 'DIFFERS from the reference'}`,
    )
  })
  console.log(`[arm64]   ${((performance.now() - started) / 1000).toFixed(1)} s under qemu`)
}
const best = reference.results[0][0][0]
console.log(`[arm64] probe 0's best hit: ${best.id} ${best.score.toFixed(4)}`)
if (best.id !== 'row-0') throw new Error('probe 0 (a copy of row 0) did not find row 0')
if (failures) throw new Error(`${failures} searches differ from the reference`)
console.log('[arm64] ok')
