// A member's shard: the first 32 bits of md5(member id as lower-case text), unsigned, modulo the
// environment's shards. Stable across versions and computable in SQL (palmvein_shard_of, migration
// 0027), so a node reads only its shards' rows. md5 here is a spreading function, not security.
import { createHash } from 'node:crypto'

export function shardOf(memberId: string, shards: number): number {
  if (shards === 1) return 0
  return createHash('md5').update(memberId.toLowerCase()).digest().readUInt32BE(0) % shards
}
