// A boot waits for its database instead of exiting: a stall or an outage while the service starts
// (connection refused, a silent network, PostgreSQL restarting) makes each boot step that needs
// the database retry until it answers. Meanwhile the log says so once per wait, and /healthz (the
// boot answers, http/boot-answers.ts) answers 503 naming the reason. There is no upper bound: a
// supervisor that restarts a process exiting for a slow database only adds connection attempts to
// a database already struggling; the 503 from /healthz is what tells orchestrators to wait.
import type { Logger } from 'pino'
import { ServiceError } from '../../errors.js'
import { isDatabaseUnreachable } from './availability.js'
import type { Database } from './database.js'

const RETRY_MS = 250

export interface BootDatabaseWait {
  /** Runs a boot step; while it fails because the database cannot be reached, waits and runs it again. */
  untilDatabase<T>(step: string, work: () => Promise<T>): Promise<T>
  /** Why the boot is waiting now ("waiting for the database (…) since 3.2 s"), or null. */
  waiting(): string | null
}

const unreachable = (error: unknown) => isDatabaseUnreachable(error) || (error instanceof ServiceError && error.code === 'database_unavailable')

export function createBootDatabaseWait(db: Pick<Database, 'available' | 'describe'>, log: Logger): BootDatabaseWait {
  let since: number | null = null
  let reason = ''
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  return {
    async untilDatabase(step, work) {
      for (;;) {
        try {
          const result = await work()
          if (since !== null) log.info(`Boot: the database answers again after ${((Date.now() - since) / 1000).toFixed(1)} s; starting`)
          since = null
          return result
        } catch (error) {
          if (!unreachable(error)) throw error
          reason = `${step}: ${(error as Error).message}`
          if (since === null) {
            since = Date.now()
            log.warn(`Boot: waiting for the database (${db.describe}; ${reason}); /healthz answers 503 until it answers`)
          }
          // The availability watch probes every 250 ms: retrying before it sees the database back
          // would only be refused again.
          await pause(RETRY_MS)
          while (!db.available) await pause(RETRY_MS / 2)
        }
      }
    },
    waiting: () => (since === null ? null : `waiting for the database (${reason}) since ${((Date.now() - since) / 1000).toFixed(1)} s`),
  }
}
