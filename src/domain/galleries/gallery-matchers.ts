// The service's matchers, one per template dimension, made on first use and shared by every
// environment of that dimension (galleries.ts).
import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import { createMatcher, type Matcher } from '@palmvein/matcher'

export interface GalleryMatchers {
  forDimension(dimension: number): Promise<Matcher>
  /** The matchers in use ("d=256 native (avx512vnni)"). */
  backends(): Promise<string[]>
  close(): Promise<void>
}

export function createGalleryMatchers(config: Config, log: Logger, onScan?: (probes: number, seconds: number) => void): GalleryMatchers {
  const matchers = new Map<number, Promise<Matcher>>()
  return {
    forDimension(dimension) {
      let matcher = matchers.get(dimension)
      if (!matcher) {
        matcher = createMatcher({
          dimension,
          threads: config.matcherThreads,
          backend: config.matcherBackend,
          ...(config.matcherMaxMemoryBytes ? { maxMemoryBytes: config.matcherMaxMemoryBytes } : {}),
          logger: (message) => log.info(`Matcher: d=${dimension}: ${message}`),
          onScan,
          exactAudit: {
            rate: config.exactAuditRate,
            onDisagreement: (twoStage, exact) =>
              log.warn(
                {
                  two_stage: twoStage[0] ? { member_id: twoStage[0].id, hand: twoStage[0].partition, match_score: twoStage[0].score } : null,
                  exact: exact[0] ? { member_id: exact[0].id, hand: exact[0].partition, match_score: exact[0].score } : null,
                },
                'Galleries: a two-stage search disagreed with the exact scan',
              ),
          },
        })
        matchers.set(dimension, matcher)
        matcher.catch(() => matchers.delete(dimension))
      }
      return matcher
    },
    async backends() {
      const ready = await Promise.all([...matchers.values()].map((matcher) => matcher.catch(() => null)))
      return ready.flatMap((matcher) => (matcher ? [`d=${matcher.dimension} ${matcher.backend.name} (${matcher.backend.isa})`] : []))
    },
    async close() {
      for (const matcher of matchers.values()) await (await matcher.catch(() => null))?.close()
      matchers.clear()
    },
  }
}
