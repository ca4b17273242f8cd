// Collects concurrent searches so that one pass over the gallery serves many probes: memory
// bandwidth, not arithmetic, bounds a scan, so 16 probes cost little more than one. A batch
// leaves when it holds `maxBatch` probes, after `windowMs`, or at once (next turn of the event
// loop) when no batch is in flight, so a lone search waits for nothing.

export interface MicroBatcherOptions<Entry> {
  maxBatch: number
  windowMs: number
  run(entries: Entry[]): Promise<void>
}

export class MicroBatcher<Entry> {
  private pending: Entry[] = []
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null
  private inFlight = 0

  constructor(private readonly options: MicroBatcherOptions<Entry>) {}

  add(entry: Entry): void {
    this.pending.push(entry)
    if (this.pending.length >= this.options.maxBatch) {
      this.flush()
    } else if (!this.timer) {
      this.timer = this.inFlight === 0
        ? setImmediate(() => this.flush())
        : setTimeout(() => this.flush(), this.options.windowMs)
    }
  }

  /** Sends everything pending now (used on close and when a batch fills). */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout)
      clearImmediate(this.timer as NodeJS.Immediate)
      this.timer = null
    }
    while (this.pending.length) {
      const batch = this.pending.splice(0, this.options.maxBatch)
      this.inFlight++
      void this.options.run(batch).finally(() => { this.inFlight-- })
    }
  }
}
