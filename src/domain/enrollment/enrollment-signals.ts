// Wakes the terminals long-polling for an enrollment session the moment one is started: waiters
// of this process are woken directly, other processes on the same database through NOTIFY. A
// wake only tells a poll to look again; the database stays the source of truth, so a duplicate or
// a lost notification costs at most one extra query or one re-check interval.
import type { Database } from '../../store/engine/database.js'

export const ENROLLMENT_CHANNEL = 'palmvein_enrollment_sessions'

export interface Waiter {
  /** Resolves at the next signal for the device. */
  readonly signalled: Promise<void>
  /** Stop waiting (always call it, signalled or not). */
  cancel(): void
}

export interface EnrollmentSignals {
  /** Register interest BEFORE reading the database, so a start in between is not missed. */
  wait(deviceId: string): Waiter
  /** Call after the change has committed. */
  announce(deviceId: string): Promise<void>
  stop(): Promise<void>
}

export async function createEnrollmentSignals(db: Pick<Database, 'listen' | 'notify'>, onError: (error: unknown) => void): Promise<EnrollmentSignals> {
  const waiters = new Map<string, Set<() => void>>()

  const wake = (deviceId: string) => {
    const set = waiters.get(deviceId)
    if (!set) return
    waiters.delete(deviceId)
    for (const resolve of set) resolve()
  }

  const subscription = await db.listen(ENROLLMENT_CHANNEL, wake)

  return {
    wait(deviceId) {
      let resolve!: () => void
      const signalled = new Promise<void>((done) => {
        resolve = done
      })
      let set = waiters.get(deviceId)
      if (!set) waiters.set(deviceId, (set = new Set()))
      set.add(resolve)
      return {
        signalled,
        cancel() {
          const current = waiters.get(deviceId)
          if (!current) return
          current.delete(resolve)
          if (current.size === 0) waiters.delete(deviceId)
        },
      }
    },
    async announce(deviceId) {
      wake(deviceId)
      // A failed NOTIFY only delays other processes' terminals until their next re-check.
      await db.notify(ENROLLMENT_CHANNEL, deviceId).catch(onError)
    },
    async stop() {
      for (const deviceId of [...waiters.keys()]) wake(deviceId)
      await subscription.unlisten().catch(onError)
    },
  }
}
