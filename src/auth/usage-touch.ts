// When a credential was last used (an API key's last_used_at, a device's last_auth_at) is written
// at most once a minute per credential: no write per request, and none either for a cached
// credential row (access-cache.ts) whose timestamp has grown old.
import { touchApiKeyUsed } from '../store/api-keys.js'
import type { Sql } from '../store/engine/database.js'
import { touchDeviceAuth } from '../store/devices.js'

const INTERVAL_MS = 60_000

export interface UsageTouch {
  /** `lastAt`: the timestamp as the credential's row had it when read. */
  touch(id: string, lastAt: Date | null): void
  /** Waits for writes in flight (shutdown). */
  flush(): Promise<void>
}

export function createApiKeyUsage(sql: Sql, onError: (error: unknown) => void): UsageTouch {
  return createUsageTouch((keyId) => touchApiKeyUsed(sql, keyId), onError)
}

export function createDeviceAuthUsage(sql: Sql, onError: (error: unknown) => void): UsageTouch {
  return createUsageTouch((deviceId) => touchDeviceAuth(sql, deviceId), onError)
}

/** `write(id)` stamps the credential's row (its own condition keeps processes from racing within a minute). */
function createUsageTouch(write: (id: string) => Promise<void>, onError: (error: unknown) => void): UsageTouch {
  const lastWritten = new Map<string, number>()
  const inFlight = new Set<Promise<unknown>>()
  return {
    touch(id, lastAt) {
      const now = Date.now()
      const previous = Math.max(lastWritten.get(id) ?? 0, lastAt?.getTime() ?? 0)
      if (now - previous < INTERVAL_MS) return
      lastWritten.set(id, now)
      const written = write(id).then(() => undefined, onError)
      inFlight.add(written)
      void written.finally(() => inFlight.delete(written))
    },
    async flush() {
      await Promise.all(inFlight)
    },
  }
}
