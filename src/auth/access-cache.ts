// Rows an access check reads, kept in memory while the database says none of them changed
// (Database.accessVersion: on the embedded database this process serves, a counter moved before
// any change to an access fact is answered; see migrations 0031 and 0033). Any movement drops every
// entry, so a revocation or a narrowed scope shows on the very next request. Where the database
// cannot say (PostgreSQL, a CLI joined to a running service), every lookup reads.
import type { Database } from '../store/engine/database.js'

// Credentials × projects in use at once; past it the oldest entry goes (a miss costs one query).
const MAX_ENTRIES = 10_000

export interface AccessCache<T> {
  /**
   * The entry for `slot`, read by `read` when absent (every time where the cache is off). Entries
   * are frozen, with the rows they hold: requests share them.
   */
  get(slot: string, read: () => Promise<T | null>): Promise<T | null>
}

/** `read`'s entry frozen with the rows it holds (one level down: rows are flat). */
async function readFrozen<T extends object>(read: () => Promise<T | null>): Promise<T | null> {
  const entry = await read()
  if (!entry) return null
  for (const value of Object.values(entry)) if (value !== null && typeof value === 'object') Object.freeze(value)
  return Object.freeze(entry)
}

export function createAccessCache<T extends object>(db: Pick<Database, 'accessVersion'>): AccessCache<T> {
  const { accessVersion } = db
  if (!accessVersion) return { get: (_slot, read) => readFrozen(read) }
  const entries = new Map<string, T>()
  let cachedAt = accessVersion()
  return {
    async get(slot, read) {
      const version = accessVersion()
      if (version !== cachedAt) {
        entries.clear()
        cachedAt = version
      }
      const cached = entries.get(slot)
      if (cached) return cached
      const found = await readFrozen(read)
      // Read before a change that committed meanwhile? Then it is not kept (the counter only grows,
      // so an unmoved counter also means no other lookup cleared the cache meanwhile). Unknown
      // credentials are never kept.
      if (found && accessVersion() === version) {
        if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!)
        entries.set(slot, found)
      }
      return found
    },
  }
}
