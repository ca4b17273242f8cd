// The galleries' /healthz check: failing while a boot load runs (identify answers 503 meanwhile),
// then the rows held, the matchers in use, the exactness audit, and a warning when memory is full.
import type { HealthCheck } from '../../health.js'
import type { Galleries, GalleryState } from './galleries-api.js'

const sum = (states: GalleryState[], of: (state: GalleryState) => number): number => states.reduce((total, state) => total + of(state), 0)

export function galleryHealthCheck(galleries: Pick<Galleries, 'states' | 'backends'>): HealthCheck {
  return {
    name: 'galleries',
    critical: true,
    async check() {
      const states = galleries.states()
      const booting = states.filter((state) => state.loading && state.blocking)
      if (booting.length > 0) throw new Error(`loading ${sum(booting, (state) => state.loaded)}/${sum(booting, (state) => state.total)} rows`)
      const backends = await galleries.backends()
      const exactness = `exactness audit ${sum(states, (state) => state.exactAudit.disagreements)} disagreement(s) in ${sum(states, (state) => state.exactAudit.audited)} two-stage search(es)`
      const notStored = sum(states, (state) => state.notStored)
      const full =
        notStored > 0
          ? `; warning: matcher memory is full, ${notStored} reference row(s) not stored (raise PALMVEIN_MATCHER_MAX_MEMORY or use the native backend)`
          : ''
      return `ready, ${states.length} environment(s), ${sum(states, (state) => state.rows)} rows${backends.length ? `; matcher ${backends.join(', ')}` : ''}; ${exactness}${full}`
    },
  }
}
