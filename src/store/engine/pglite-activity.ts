// What the embedded database's thread shows the service's thread, readable at once (no round trip):
// - when the unit of work it runs now started (0 while idle). /healthz reads it instead of queueing
//   a SELECT 1 behind other clients' statements, so a burst of slow SQL does not make the probe slow.
// - how many changes to access facts have committed. Migration 0031 makes every change to the rows
//   an API key's access check reads NOTIFY ACCESS_CHANNEL; the thread sees that notification in
//   the committing statement's own answer and counts it before passing the answer on, so nobody is
//   told "revoked" while a cache of those rows (auth/api-key-lookup.ts) still looks current.
export const ACCESS_CHANNEL = 'palmvein_access_changed'

export class PgliteActivity {
  private readonly started: Float64Array
  private readonly accessChanges: Int32Array

  /** `buffer`: shared between the two threads (create() on one side, then pass it in workerData). */
  constructor(readonly buffer: SharedArrayBuffer) {
    this.started = new Float64Array(buffer, 0, 1)
    this.accessChanges = new Int32Array(buffer, Float64Array.BYTES_PER_ELEMENT, 1)
  }

  static create(): PgliteActivity {
    return new PgliteActivity(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT + Int32Array.BYTES_PER_ELEMENT))
  }

  unitStarted(): void {
    this.started[0] = Date.now()
  }

  unitEnded(): void {
    this.started[0] = 0
  }

  /** How long the unit running now has run, in ms; 0 while idle. */
  busyForMs(): number {
    const started = this.started[0]
    return started === 0 ? 0 : Math.max(0, Date.now() - started)
  }

  accessChanged(): void {
    Atomics.add(this.accessChanges, 0, 1)
  }

  accessVersion(): number {
    return Atomics.load(this.accessChanges, 0)
  }
}
