// What the parts of the galleries (load, registry, sync, shards) share: the options they were made
// with, the matchers and reference reader, and the one map of environment entries (gallery-entry.ts).
import type { Logger } from 'pino'
import type { Sql } from '../../store/engine/database.js'
import type { GalleriesOptions } from './galleries-api.js'
import type { Entry } from './gallery-entry.js'
import type { GalleryMatchers } from './gallery-matchers.js'
import type { ReferenceReader } from './reference-reader.js'

export interface GalleriesContext {
  options: GalleriesOptions
  sql: Sql
  log: Logger
  matchers: GalleryMatchers
  reader: ReferenceReader
  /** Every environment this process has registered, by id (loading, loaded, or failed on demand). */
  entries: Map<string, Entry>
  /** True once close() has begun: loads, retries and catch-ups stop. */
  closed(): boolean
}
