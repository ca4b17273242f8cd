// The terminal's long poll for its enrollment session. The poll registers for a wake-up before it
// reads the database (so a start in between is never missed), answers as soon as a session is
// active (picking it up: pending → in_progress), and otherwise waits for a signal, the end of the
// wait, the client going away, or shutdown. It re-reads the database now and then anyway, in case
// a cross-process notification was lost.
import type { DomainResources } from '../resources.js'
import { pickUpActiveSession, type SessionRow } from '../../store/enrollment-sessions.js'
import { nowSeconds } from './enrollment-sessions.js'

export const MAX_POLL_WAIT_SECONDS = 30
// Shutdown is noticed within this; the HTTP server waits for requests in flight.
const SHUTDOWN_CHECK_MS = 1_000
const RECHECK_MS = 10_000

type Outcome = 'signal' | 'tick' | 'aborted'

function waitFor(signal: Promise<void>, ms: number, aborted: Promise<void>): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    signal.then((): Outcome => 'signal'),
    aborted.then((): Outcome => 'aborted'),
    new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve('tick'), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

export async function pollEnrollment(
  app: Pick<DomainResources, 'enrollmentSignals' | 'shuttingDown' | 'sql'>,
  deviceId: string,
  waitSeconds: number,
  aborted: Promise<void>,
): Promise<SessionRow | null> {
  const deadline = Date.now() + waitSeconds * 1000
  for (;;) {
    const waiter = app.enrollmentSignals.wait(deviceId)
    try {
      const session = await pickUpActiveSession(app.sql, deviceId, nowSeconds())
      if (session) return session
      if (Date.now() >= deadline || app.shuttingDown) return null
      const recheckAt = Math.min(deadline, Date.now() + RECHECK_MS)
      for (;;) {
        const remaining = recheckAt - Date.now()
        if (app.shuttingDown || remaining <= 0) break
        const outcome = await waitFor(waiter.signalled, Math.min(remaining, SHUTDOWN_CHECK_MS), aborted)
        if (outcome === 'aborted') return null
        if (outcome === 'signal') break
      }
      if (app.shuttingDown) return null
      if (Date.now() >= deadline) {
        // One last look: a session may have started during the final tick.
        return await pickUpActiveSession(app.sql, deviceId, nowSeconds())
      }
    } finally {
      waiter.cancel()
    }
  }
}
