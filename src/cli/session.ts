// What the CLI's data commands (import, export, dedup) open alike: the configuration, a logger on
// stderr (stdout carries their output), the database (joining a running service's), migrations,
// the key ring and, for those that search, galleries of their own; and the tenant-managed project
// they work on.
import type { Logger } from 'pino'
import { loadConfig, type Config } from '../config.js'
import { createGalleries, type Galleries } from '../domain/galleries/galleries.js'
import { applyErasureLedger } from '../domain/members/erasures.js'
import { createKeyring, loadMasterKey, type Keyring } from '../keys/keyring.js'
import { isUuid } from '../ids.js'
import { CommandRefused } from './errors.js'
import { createLogger } from '../log.js'
import { openDatabase, type Database } from '../store/engine/database.js'
import { migrate } from '../store/migrate.js'
import { projectById } from '../store/projects.js'

export interface CliSession {
  config: Config
  db: Database
  keyring: Keyring
  log: Logger
  galleries: Galleries
  /** Members the erasure ledger erased again when the session opened (a restored backup held them). */
  reErased: number
}

/** Runs `task` with an open session, closed afterwards whatever happens. */
export async function withCliSession<T>(task: (session: CliSession) => Promise<T>): Promise<T> {
  const config = loadConfig()
  // Progress lines of a long command are noise on a terminal; warnings and errors still show.
  const log = createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, true)
  const db = await openDatabase(config)
  try {
    await migrate(db.sql)
    const keyring = createKeyring((await loadMasterKey(config)).key)
    await keyring.refreshMasterKeys(db.sql)
    const galleries = createGalleries({ config, db, keyring, log })
    try {
      // Nothing is read before the ledger is applied: an export never holds an erased member.
      const reErased = await applyErasureLedger({ sql: db.sql, config, log }, (environmentId, memberId) => galleries.announce(environmentId, memberId))
      return await task({ config, db, keyring, log, galleries, reErased })
    } finally {
      await galleries.close()
    }
  } finally {
    await db.close()
  }
}

/** The project `id` with its own environment, or CommandRefused. */
export async function tenantProject(session: CliSession, id: string, purpose: string) {
  if (!isUuid(id)) throw new CommandRefused('--project must be a project id (a UUID)')
  const project = await projectById(session.db.sql, id)
  if (!project) throw new CommandRefused(`project ${id} not found`)
  if (!project.environment_id) throw new CommandRefused(`project ${id} has no environment; ${purpose} only a project with its own (tenant-managed) environment`)
  if (project.environment_owner_org_id !== project.org_id) {
    throw new CommandRefused(
      `project ${id} reads environment ${project.environment_id} of another organization; ${purpose} only a project whose organization owns its environment`,
    )
  }
  return project
}
