// Erasure that no backup undoes (DECISIONS "Palm captures and matching"). Deleting a member
// destroys its data key with its row, but every database backup taken before still holds that row.
// So the erasure is also written to the erasure ledger (store/erasure-ledger.ts), a file kept with
// the master key material and never in a backup, synced before the DELETE commits; and every start,
// CLI session and restore deletes, before serving anything, each member of the ledger that a
// restored database brought back. The ledger holds ids and times only, so it needs no key and a
// master key rotation leaves it as it is. A crash between the ledger's sync and the commit leaves
// the member in the database and in the ledger: the next start completes that erasure.
import path from 'node:path'
import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import { isUuid } from '../../ids.js'
import type { Queryable, Sql } from '../../store/engine/database.js'
import { appendErasure, createLedger, readErasures } from '../../store/erasure-ledger.js'
import { cancelSessionsOfMember } from '../../store/enrollment-sessions.js'
import { lockEnvironmentGallery, recordGalleryChange } from '../../store/gallery-changes.js'
import { deleteMember, membersAmong } from '../../store/members.js'

export const ERASURE_LEDGER_FILE = 'erasures.log'
// Members looked up per statement while a ledger is applied.
const LOOKUP_BATCH = 5_000

export function erasureLedgerFile(config: Pick<Config, 'erasureLedger' | 'dataDir'>): string {
  return config.erasureLedger ?? path.join(config.dataDir, ERASURE_LEDGER_FILE)
}

/**
 * Deletes the member's row (its wrapped data key, its templates by cascade) and records the
 * erasure in the gallery change log and, synced to disk, in the ledger: call inside the delete's
 * transaction, which commits only after the ledger holds the erasure. Returns null when there is
 * no such member in the project.
 */
export async function eraseMemberRow(
  tx: Queryable,
  config: Pick<Config, 'erasureLedger' | 'dataDir'>,
  projectId: string,
  memberId: string,
  lockedEnvironmentId: string | null,
): Promise<{ environment_id: string } | null> {
  const row = await deleteRecorded(tx, projectId, memberId, lockedEnvironmentId)
  if (!row) return null
  await cancelSessionsOfMember(tx, memberId)
  await appendErasure(erasureLedgerFile(config), { member_id: memberId, environment_id: row.environment_id, erased_at: new Date().toISOString() })
  return row
}

/** Deletes the member's row and records the change for the galleries (under its environment's lock). */
async function deleteRecorded(tx: Queryable, projectId: string, memberId: string, lockedEnvironmentId: string | null) {
  const row = await deleteMember(tx, projectId, memberId)
  if (!row) return null
  if (row.environment_id !== lockedEnvironmentId) await lockEnvironmentGallery(tx, row.environment_id)
  await recordGalleryChange(tx, row.environment_id, memberId)
  return row
}

/**
 * Erases again every member of the ledger the database still holds (a restored backup brought it
 * back) and announces each to the galleries of running processes. Returns how many were erased.
 */
/** The service makes the ledger at its first start, so it exists to be kept with the master key. */
export async function ensureErasureLedger(config: Pick<Config, 'erasureLedger' | 'dataDir'>): Promise<void> {
  await createLedger(erasureLedgerFile(config))
}

export async function applyErasureLedger(
  deps: { sql: Sql; config: Pick<Config, 'erasureLedger' | 'dataDir'>; log: Pick<Logger, 'info' | 'warn'> },
  announce: (environmentId: string, memberId: string) => Promise<void> = async () => {},
): Promise<number> {
  const file = erasureLedgerFile(deps.config)
  const { erasures, torn } = await readErasures(file)
  if (torn > 0) deps.log.warn(`Erasures: ${torn} torn line(s) in ${file} left out (writes a crash cut short, before their DELETE committed)`)
  const ids = [...new Set(erasures.map((erasure) => erasure.member_id).filter(isUuid))]
  let erased = 0
  for (let start = 0; start < ids.length; start += LOOKUP_BATCH) {
    for (const member of await membersAmong(deps.sql, ids.slice(start, start + LOOKUP_BATCH))) {
      const row = await deps.sql.begin(async (tx) => {
        // Locked before the row, as every gallery writer does.
        await lockEnvironmentGallery(tx, member.environment_id)
        return deleteRecorded(tx, member.project_id, member.id, member.environment_id)
      })
      if (!row) continue
      erased += 1
      await announce(row.environment_id, member.id).catch((error) => deps.log.warn({ err: error }, 'Erasures: gallery notification failed'))
    }
  }
  if (erased > 0) deps.log.info(`Erasures: the database held ${erased} member(s) erased before (a restored backup); erased again from ${file}`)
  return erased
}
