// Collects concurrent searches so that one pass over the gallery serves many probes: memory
// bandwidth, not arithmetic, bounds a scan, so 16 probes cost little more than one. When idle, a
// batch leaves on the next turn of the event loop (a lone search waits for nothing). While a batch
// is in flight, new probes wait for it to finish and then leave together (up to `maxBatch`):
// sending small batches alongside would only queue behind it on the pool, one pass per probe.

export interface MicroBatcherOptions<Entry> {
  maxBatch: number
  /** Batches scanning at once (each one already uses every pool worker). Default 1. */
  maxInFlight?: number
  run(entries: Entry[]): Promise<void>
}

export class MicroBatcher<Entry> {
  private pending: Entry[] = []
  private timer: NodeJS.Immediate | null = null
  private inFlight = 0
  private readonly maxInFlight: number

  constructor(private readonly options: MicroBatcherOptions<Entry>) {
    this.maxInFlight = options.maxInFlight ?? 1
  }

  add(entry: Entry): void {
    this.pending.push(entry)
    // Busy: the entry leaves when the batch in flight completes.
    if (this.inFlight >= this.maxInFlight) return
    if (this.pending.length >= this.options.maxBatch) this.dispatch()
    else this.timer ??= setImmediate(() => this.dispatch())
  }

  /** Sends everything pending now, whatever is in flight (close). */
  flush(): void {
    this.dispatch(Infinity)
  }

  private dispatch(limit = this.maxInFlight): void {
    if (this.timer) {
      clearImmediate(this.timer)
      this.timer = null
    }
    while (this.pending.length && this.inFlight < limit) {
      const batch = this.pending.splice(0, this.options.maxBatch)
      this.inFlight++
      void this.options.run(batch).finally(() => {
        this.inFlight--
        if (this.pending.length) this.dispatch()
      })
    }
  }
}
