// Self-enrollment requests name no project, so they are counted per person (identity-token subject)
// and, for starts, per kiosk: in the database like a project's requests (rate-limit.ts), so every
// service process on one database shares the budgets. Past one: 429 with RateLimit-* and Retry-After.
import { v5 as uuidv5 } from 'uuid'
import type { RateLimiter } from './rate-limit.js'

/** Every self-enrollment request of one person (start, confirm, list, erase). */
export const PERSON_REQUESTS_PER_MINUTE = 20
const PERSON_REQUESTS_PER_DAY = 500
/** Sessions started on one kiosk, whoever starts them: a kiosk enrolls a person a minute or so. */
export const KIOSK_STARTS_PER_MINUTE = 10
const KIOSK_STARTS_PER_DAY = 2_000

// Namespaces of the counters' ids (rate_limit_counters.project_id), apart from projects' and registrations'.
const PERSON_BUCKETS = '6f0d1c2b-8e47-4a3f-b5c9-2d7e1a9f4c60'
const KIOSK_BUCKETS = '0b9e4f7a-3c12-4d85-9e6b-7a1f2c8d5e93'

type Limiter = { rateLimiter: Pick<RateLimiter, 'charge'> }

/** Counts one self-enrollment request of the person; returns the RateLimit-* headers, or throws 429. */
export function chargePerson(app: Limiter, subject: string): Promise<Record<string, string>> {
  return app.rateLimiter.charge({
    id: uuidv5(`self-enrollment:${subject}`, PERSON_BUCKETS),
    label: 'your self-enrollment',
    requests_per_minute: PERSON_REQUESTS_PER_MINUTE,
    daily_request_limit: PERSON_REQUESTS_PER_DAY,
  })
}

/** Counts one session started on the kiosk; returns the RateLimit-* headers, or throws 429. */
export function chargeKiosk(app: Limiter, deviceId: string): Promise<Record<string, string>> {
  return app.rateLimiter.charge({
    id: uuidv5(`kiosk:${deviceId}`, KIOSK_BUCKETS),
    label: "this kiosk's self-enrollment",
    requests_per_minute: KIOSK_STARTS_PER_MINUTE,
    daily_request_limit: KIOSK_STARTS_PER_DAY,
  })
}

/** Of two budgets' headers, the one with fewer requests left (the one the caller meets first). */
export function tighterLimit(a: Record<string, string>, b: Record<string, string>): Record<string, string> {
  return Number(b['RateLimit-Remaining']) < Number(a['RateLimit-Remaining']) ? b : a
}
