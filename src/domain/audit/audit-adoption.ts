// The first start with a keyed trail (migration 0035) on a database the earlier version wrote:
// records linked by plain SHA-256 and anchors without a MAC. Nothing can key them after the fact,
// so they are adopted as they are: a signed checkpoint at the end of every chain, and a MAC on
// every anchor, in one transaction. From then on the keyed records and checkpoints pin them, and
// `palmvein audit verify` refuses unkeyed records after keyed ones. Only while the database holds
// no keyed record and no checkpoint (the first start after the upgrade): trust on first use.
import type { AuditKeys } from './audit-keys.js'
import { signCheckpoint } from './audit-checkpoints.js'
import { sealAnchor } from './audit-verify.js'
import type { Sql } from '../../store/engine/database.js'
import { insertCheckpoint } from '../../store/audit-keys.js'
import { auditChains, chainTail, setAnchorMac, trailIsKeyed, unkeyedAnchors } from '../../store/audit-log.js'

/** Adopts an unkeyed trail; returns the chains adopted (none once the trail is keyed). */
export async function adoptUnkeyedTrail(sql: Sql, keys: AuditKeys): Promise<string[]> {
  return sql.begin(async (tx) => {
    if (await trailIsKeyed(tx)) return []
    const chains = await auditChains(tx)
    for (const chain of chains) {
      const tail = await chainTail(tx, chain)
      if (tail.nextSeq > 1) await insertCheckpoint(tx, signCheckpoint(keys.current, chain, tail.nextSeq - 1, tail.prev))
    }
    for (const anchor of await unkeyedAnchors(tx)) {
      const { key_id, mac } = sealAnchor(keys.current)(anchor)
      await setAnchorMac(tx, anchor, key_id, mac)
    }
    return chains
  })
}
