// last_used_at of an API key is written at most once a minute per key: no write per request.
import { touchApiKeyUsed } from '../store/api-keys.js'
import type { Sql } from '../store/database.js'

const INTERVAL_MS = 60_000

export interface ApiKeyUsage {
  touch(keyId: string, lastUsedAt: Date | null): void
  /** Waits for writes in flight (shutdown). */
  flush(): Promise<void>
}

export function createApiKeyUsage(sql: Sql, onError: (error: unknown) => void): ApiKeyUsage {
  const lastWritten = new Map<string, number>()
  const inFlight = new Set<Promise<unknown>>()
  return {
    touch(keyId, lastUsedAt) {
      const now = Date.now()
      const previous = Math.max(lastWritten.get(keyId) ?? 0, lastUsedAt?.getTime() ?? 0)
      if (now - previous < INTERVAL_MS) return
      lastWritten.set(keyId, now)
      // The store's condition keeps several processes from writing within the same minute.
      const write = touchApiKeyUsed(sql, keyId).then(() => undefined, onError)
      inFlight.add(write)
      void write.finally(() => inFlight.delete(write))
    },
    async flush() {
      await Promise.all(inFlight)
    },
  }
}
