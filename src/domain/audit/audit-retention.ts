// The daily retention purge: records older than the retention go, each chain anchored (with a MAC)
// so it still verifies; a chain whose block fails verification is not purged.
import type { Logger } from 'pino'
import { purgeAuditBefore } from '../../store/audit-log.js'
import type { Sql } from '../../store/engine/database.js'
import type { AuditKeys } from './audit-keys.js'
import { purgeKeys } from './audit-verify.js'

export function retentionPurge(options: { sql: Sql; log: Logger; keys: AuditKeys; retentionDays: number }): () => Promise<void> {
  const { sql, log, retentionDays } = options
  return async () => {
    try {
      const { deleted, refused } = await purgeAuditBefore(sql, new Date(Date.now() - retentionDays * 86_400_000), purgeKeys(options.keys))
      if (deleted > 0) log.info(`Audit: purged ${deleted} record(s) older than ${retentionDays} days`)
      for (const chain of refused) log.error(chain, 'Audit: not purging a chain whose block fails verification (run palmvein audit verify)')
    } catch (error) {
      log.warn({ err: error }, 'Audit: the retention purge failed; it runs again tomorrow')
    }
  }
}
