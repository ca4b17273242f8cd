// The matcher the self-join scan tests run on, once per backend and native once per ISA the addon
// offers (shared by row-range-scan.test.ts and the service's test/domain/dedup-cells-backends.test.ts).
import { afterAll, beforeAll } from 'vitest'
import { availableBackends, loadNativeAddon, type BackendName } from '../src/backend.js'
import { createMatcher, type Matcher } from '../src/index.js'

export const SELF_JOIN_DIMENSION = 128
const nativeAddon = loadNativeAddon()

export const selfJoinVariants = availableBackends().flatMap((backend): { name: string; backend: BackendName; isa?: string }[] =>
  backend === 'native' && nativeAddon.ok
    ? nativeAddon.value.availableIsas().map((isa) => ({ name: `native:${isa}`, backend, isa }))
    : [{ name: backend, backend }],
)

/** Inside a describe: a matcher on this backend (and ISA) for its tests, closed after them. */
export function useSelfJoinMatcher({ backend, isa }: { backend: BackendName; isa?: string }): () => Matcher {
  let matcher: Matcher
  let previousIsa: string | undefined
  beforeAll(async () => {
    if (isa && nativeAddon.ok) {
      previousIsa = nativeAddon.value.activeIsa()
      nativeAddon.value.setIsa(isa)
    }
    // chunkRows 64: row ranges cross chunks; two workers split the probes.
    matcher = await createMatcher({ dimension: SELF_JOIN_DIMENSION, threads: 2, backend, chunkRows: 64, maxMemoryBytes: 256 << 20 })
  })
  afterAll(async () => {
    await matcher?.close()
    if (previousIsa && nativeAddon.ok) nativeAddon.value.setIsa(previousIsa)
  })
  return () => matcher
}
