// Audit keys for tests that drive the trail without a service: those of a fresh master key.
import { randomBytes } from 'node:crypto'
import { loadAuditKeys, type AuditKeys } from '../../src/domain/audit/audit-keys.js'
import { createKeyring } from '../../src/keys/keyring.js'
import type { Sql } from '../../src/store/engine/database.js'

export async function testAuditKeys(sql: Sql, masterKey = randomBytes(32)): Promise<AuditKeys> {
  return loadAuditKeys(sql, createKeyring(masterKey), masterKey, { register: true })
}
