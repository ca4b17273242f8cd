// The last minutes of this process's traffic, kept in memory for the operator API (GET
// /v1/operations/traffic) whether or not Prometheus scrapes: requests answered and identify
// latencies, in fixed time slots of a ring. Each slot keeps a log-scale latency histogram (about 4 %
// apart), so percentiles over any span are a merge of a few arrays, never a sort of samples.

/** Latency histogram edges: 0.05 ms × 1.04^i, up to about 60 s. */
const FIRST_EDGE_MS = 0.05
const RATIO = 1.04
const EDGES = Math.ceil(Math.log(60_000 / FIRST_EDGE_MS) / Math.log(RATIO)) + 1

const edgeOf = (index: number) => FIRST_EDGE_MS * RATIO ** index
const indexOf = (ms: number) => (ms <= FIRST_EDGE_MS ? 0 : Math.min(EDGES - 1, Math.ceil(Math.log(ms / FIRST_EDGE_MS) / Math.log(RATIO))))

interface Slot {
  /** The slot's start, in epoch milliseconds (a multiple of the slot length); -1 when never used. */
  start: number
  requests: number
  errors: number
  identifies: number
  latency: Uint32Array
}

export interface TrafficPoint {
  /** The slot's start (ISO 8601). */
  at: string
  requests: number
  /** Answers with a 5xx status. */
  server_errors: number
  identifies: number
  identify_p50_ms: number | null
  identify_p95_ms: number | null
}

export interface TrafficSnapshot {
  slot_seconds: number
  /** Oldest first, every slot of the span (empty ones at zero). */
  points: TrafficPoint[]
  requests_per_second: number
  identify_p50_ms: number | null
  identify_p95_ms: number | null
}

export interface TrafficWindow {
  /** One answered request; `identify` when it was an identification. */
  record(identify: boolean, status: number, ms: number, now?: number): void
  /** The last `seconds` (at most the window), up to `now`. */
  snapshot(seconds: number, now?: number): TrafficSnapshot
  readonly windowSeconds: number
}

/** The smallest edge under which `share` of the histogram's counts lie; null when empty. */
function percentile(histogram: Uint32Array, total: number, share: number): number | null {
  if (total === 0) return null
  const rank = Math.ceil(total * share)
  let seen = 0
  for (let index = 0; index < histogram.length; index++) {
    seen += histogram[index]
    if (seen >= rank) return Math.round(edgeOf(index) * 100) / 100
  }
  return null
}

export function createTrafficWindow(options: { slotSeconds?: number; slots?: number } = {}): TrafficWindow {
  const slotMs = (options.slotSeconds ?? 10) * 1000
  const slots: Slot[] = Array.from({ length: options.slots ?? 90 }, () => ({
    start: -1,
    requests: 0,
    errors: 0,
    identifies: 0,
    latency: new Uint32Array(EDGES),
  }))
  const slotAt = (now: number): Slot => {
    const start = Math.floor(now / slotMs) * slotMs
    const slot = slots[Math.floor(now / slotMs) % slots.length]
    if (slot.start !== start) {
      // A slot a full turn old is reused for this one.
      slot.start = start
      slot.requests = slot.errors = slot.identifies = 0
      slot.latency.fill(0)
    }
    return slot
  }
  return {
    windowSeconds: (slots.length * slotMs) / 1000,
    record(identify, status, ms, now = Date.now()) {
      const slot = slotAt(now)
      slot.requests++
      if (status >= 500) slot.errors++
      if (identify) {
        slot.identifies++
        slot.latency[indexOf(ms)]++
      }
    },
    snapshot(seconds, now = Date.now()) {
      const count = Math.max(1, Math.min(slots.length, Math.ceil((seconds * 1000) / slotMs)))
      const current = Math.floor(now / slotMs) * slotMs
      const merged = new Uint32Array(EDGES)
      let identifies = 0
      let requests = 0
      const points: TrafficPoint[] = []
      for (let back = count - 1; back >= 0; back--) {
        const start = current - back * slotMs
        const slot = slots[Math.floor(start / slotMs) % slots.length]
        const live = slot.start === start
        const point = {
          at: new Date(start).toISOString(),
          requests: live ? slot.requests : 0,
          server_errors: live ? slot.errors : 0,
          identifies: live ? slot.identifies : 0,
          identify_p50_ms: live ? percentile(slot.latency, slot.identifies, 0.5) : null,
          identify_p95_ms: live ? percentile(slot.latency, slot.identifies, 0.95) : null,
        }
        if (live) {
          for (let index = 0; index < EDGES; index++) merged[index] += slot.latency[index]
          identifies += slot.identifies
          requests += slot.requests
        }
        points.push(point)
      }
      // The current slot is partly over: the rate counts only the time it has run.
      const elapsedMs = (count - 1) * slotMs + (now - current)
      return {
        slot_seconds: slotMs / 1000,
        points,
        requests_per_second: Math.round((requests / Math.max(1, elapsedMs / 1000)) * 100) / 100,
        identify_p50_ms: percentile(merged, identifies, 0.5),
        identify_p95_ms: percentile(merged, identifies, 0.95),
      }
    },
  }
}
