// Commands other than serve, migrate and restore work in the data directory a service made: run
// from another directory they would otherwise create a second ./data, with its own master key
// and token issuer, that the service knows nothing of.
import { existsSync } from 'node:fs'
import type { Config } from '../config.js'
import { CommandRefused } from './errors.js'

/** Whether this command would keep something in the data directory: the embedded database, the master key file, or (`issuer`) the local token issuer's key. */
export function keepsFilesInDataDirectory(config: Pick<Config, 'databaseUrl' | 'masterKey'>, issuer = false): boolean {
  return issuer || !config.databaseUrl || !config.masterKey
}

/** CommandRefused when the data directory does not exist: the command will not create one. */
export function refuseMissingDataDirectory(config: Pick<Config, 'dataDir'>): void {
  if (existsSync(config.dataDir)) return
  throw new CommandRefused(
    `no data directory at ${config.dataDir} (PALMVEIN_DATA_DIR, default ./data): run this where the service runs or set PALMVEIN_DATA_DIR to its data directory; only 'palmvein serve', 'palmvein migrate' and 'palmvein restore' create one`,
  )
}
