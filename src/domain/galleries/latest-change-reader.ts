// Reads an environment's latest gallery change number for identify's freshness check (galleries'
// `fresh`), sharing queries among concurrent callers: each caller gets a read that STARTED after
// its call (so it sees every change committed before the call), yet at most one read per
// environment is in flight and one queued behind it, however many identifies arrive at once.

export type LatestChangeReader = (environmentId: string) => Promise<number>

export function createLatestChangeReader(read: LatestChangeReader): LatestChangeReader {
  const reads = new Map<string, { running: Promise<number> | null; queued: Promise<number> | null }>()
  return (environmentId) => {
    let state = reads.get(environmentId)
    if (!state) reads.set(environmentId, (state = { running: null, queued: null }))
    const current = state
    const launch = (): Promise<number> => {
      const started: Promise<number> = read(environmentId).finally(() => {
        if (current.running === started) current.running = null
      })
      current.running = started
      return started
    }
    if (!current.running) return launch()
    // A read already running may have started before this call: wait for the next one.
    current.queued ??= current.running
      .then(
        () => {},
        () => {},
      )
      .then(() => {
        current.queued = null
        return launch()
      })
    return current.queued
  }
}
