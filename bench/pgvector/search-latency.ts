// Latency of an in-process search function (palmvein's gallery, or a pgvector query through the
// postgres client): each probe once on one client, its answers kept for the agreement; then
// `clients` closed-loop clients for a fixed time, each sending its next probe when the last answered.
import os from 'node:os'
import type { GalleryHit } from '../../src/domain/identification/identify-decision.js'
import { summarize } from '../load/stats.mjs'

export type Search = (probe: Int8Array) => Promise<GalleryHit[]>

export interface LatencyRow {
  clients: number
  count: number
  p50: number | null
  p95: number | null
  perSecond: number
  /** 1-minute load average when the measurement ended (the machine is shared). */
  loadAverage: number
}

const WARMUP_PROBES = 10

/** Each probe once, in order, until `budgetSeconds` runs out; the answers of the probes done, and their latency. */
export async function onePass(search: Search, probes: readonly Int8Array[], budgetSeconds = Number.POSITIVE_INFINITY) {
  for (const probe of probes.slice(0, WARMUP_PROBES)) await search(probe)
  const answers: GalleryHit[][] = []
  const samples: number[] = []
  const started = performance.now()
  for (const probe of probes) {
    const sent = performance.now()
    answers.push(await search(probe))
    samples.push(performance.now() - sent)
    if (performance.now() - started > budgetSeconds * 1000) break
  }
  const seconds = (performance.now() - started) / 1000
  const latency: LatencyRow = { clients: 1, ...pick(summarize(samples)), perSecond: samples.length / seconds, loadAverage: os.loadavg()[0] }
  return { answers, latency }
}

const pick = ({ count, p50, p95 }: ReturnType<typeof summarize>) => ({ count, p50, p95 })

/** `clients` closed-loop clients for `seconds` (after one second unmeasured). */
export async function closedLoop(search: Search, probes: readonly Int8Array[], clients: number, seconds: number): Promise<LatencyRow> {
  const samples: number[] = []
  let next = 0
  const start = performance.now()
  const measureFrom = start + 1000
  const stopAt = measureFrom + seconds * 1000
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < stopAt) {
        const probe = probes[next++ % probes.length]
        const sent = performance.now()
        await search(probe)
        if (sent >= measureFrom) samples.push(performance.now() - sent)
      }
    }),
  )
  const measured = (performance.now() - measureFrom) / 1000
  return { clients, ...pick(summarize(samples)), perSecond: samples.length / measured, loadAverage: os.loadavg()[0] }
}
