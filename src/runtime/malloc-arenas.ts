// `palmvein serve` caps glibc's malloc arenas. glibc gives each new thread an arena of its own, up
// to 8 per core, and every arena keeps what it once held: an idle embedded service held 55 MiB in
// four of them. With 2, an idle service measured 8-20 MiB less (bench/results/2026-11-29T03-30Z-
// idle-memory-3); with 1 (every thread allocating from the main arena), 141-146 MiB idle against
// 146-149 with 2, whose second arena had kept 3-13 MiB, for a 100k-member boot ~7 % slower and
// identify at 16 clients at or below the runs with 2 (bench/results/2026-11-29T09-25Z-page-cache).
// A cap binds only arenas not yet created, and V8's and libuv's threads take theirs while
// modules load: set at the command's start, it left five arenas
// (bench/results/2026-11-29T06-00Z-arena-default). So the bin sets it before it loads the
// program (cli/main.ts).
import { loadNativeAddon } from '@palmvein/matcher/backend'

/** The service's malloc arenas unless its environment names a number. */
export const SERVICE_MALLOC_ARENAS = 1

let capped: number | null = null

/**
 * Caps the arenas at SERVICE_MALLOC_ARENAS unless the environment sets MALLOC_ARENA_MAX (read by
 * glibc itself: the operator's number wins). Returns the cap set, or null when none was
 * (operator's number, no glibc, no addon).
 */
export function limitServiceMallocArenas(env: NodeJS.ProcessEnv = process.env): number | null {
  if (env.MALLOC_ARENA_MAX !== undefined) return null
  const addon = loadNativeAddon()
  capped = addon.ok && addon.value.limitMallocArenas(SERVICE_MALLOC_ARENAS) ? SERVICE_MALLOC_ARENAS : null
  return capped
}

/** The cap this process set (for its log), or null. */
export const serviceMallocArenas = (): number | null => capped
