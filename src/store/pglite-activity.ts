// What the embedded database's thread is doing, readable from the service's thread at once: when
// the unit of work it runs now started (0 while idle). /healthz reads it instead of queueing a
// SELECT 1 behind other clients' statements, so a burst of slow SQL does not make the probe slow.
const STARTED = 0

export class PgliteActivity {
  private readonly slots: Float64Array

  /** `buffer`: shared between the two threads (create() on one side, then pass it in workerData). */
  constructor(readonly buffer: SharedArrayBuffer) {
    this.slots = new Float64Array(buffer)
  }

  static create(): PgliteActivity {
    return new PgliteActivity(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT))
  }

  unitStarted(): void {
    this.slots[STARTED] = Date.now()
  }

  unitEnded(): void {
    this.slots[STARTED] = 0
  }

  /** How long the unit running now has run, in ms; 0 while idle. */
  busyForMs(): number {
    const started = this.slots[STARTED]
    return started === 0 ? 0 : Math.max(0, Date.now() - started)
  }
}
