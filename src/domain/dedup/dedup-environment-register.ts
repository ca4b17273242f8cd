// An environment's register for the cell search (`palmvein dedup`), read straight from the
// database: its reference rows in id order, decrypted as a gallery load decrypts them, each palm
// packed as it comes (dedup-packed-palms.ts) with its member and hand (dedup-reference-keys.ts).
// No gallery holds them first: at 1M members the environment's gallery was 0.6 GB of the run's
// memory beside the packed copy the search reads.
import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import type { Keyring } from '../../keys/keyring.js'
import type { Sql } from '../../store/engine/database.js'
import type { EnvironmentRow } from '../../store/organizations.js'
import { countEnvironmentReferences } from '../../store/templates.js'
import { createReferenceReader } from '../galleries/reference-reader.js'
import { createPalmPacker, type PackedPalms } from './dedup-packed-palms.js'
import { createKeysCollector, type ReferenceKeys } from './dedup-reference-keys.js'

export interface RegisterReading {
  config: Config
  sql: Sql
  keyring: Keyring
  log: Logger
}

/** The environment's palms (an unreadable one, logged, pairs with nothing) and their keys. */
export async function readEnvironmentRegister(reading: RegisterReading, environment: EnvironmentRow): Promise<{ palms: PackedPalms; keys: ReferenceKeys }> {
  const reader = createReferenceReader({ ...reading, stopped: () => false })
  // Room for rows enrolled while the register is read, so the packed copy is rarely regrown.
  const expected = await countEnvironmentReferences(reading.sql, environment.id)
  const room = Math.ceil(expected * 1.01) + 1024
  const packer = createPalmPacker(environment.dimension, room)
  const collector = createKeysCollector(room)
  await reader.read(environment, expected, ({ memberIds, hands, vectors }) => {
    collector.addPage(memberIds, hands)
    for (const vector of vectors) packer.add(vector)
  })
  const keys = collector.finish()
  return { palms: packer.finish((palm) => keys.ownerOf[palm]), keys }
}
