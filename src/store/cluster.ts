// Queries of cluster mode: node membership (heartbeats), shard leases, and the shard filter of
// the reference rows a node loads. Times are the database's (now()), so nodes need no clock agreement.
import type { Queryable, Sql } from './engine/database.js'

export interface NodeRow {
  node_id: string
  url: string
  started_at: Date
  heartbeat_at: Date
  full: boolean
  memory_bytes: number
}

export interface ShardHoldRow {
  environment_id: string
  shard: number
  node_id: string
  state: 'loading' | 'ready'
  rows: number
}

/** Registers or refreshes this node; a previous process at the same URL is gone (its holds with it). */
export async function registerNode(sql: Sql, node: { nodeId: string; url: string }): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`DELETE FROM cluster_nodes WHERE url = ${node.url} AND node_id <> ${node.nodeId}`
    await tx`INSERT INTO cluster_nodes (node_id, url) VALUES (${node.nodeId}, ${node.url}) ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = now()`
  })
}

/**
 * One heartbeat: the node row and every hold of this node are extended by the lease. False when
 * the row is gone (another node took the URL, or an operator removed it): the node must stop serving.
 */
export async function heartbeat(sql: Sql, nodeId: string, leaseMs: number, state: { full: boolean; memoryBytes: number }): Promise<boolean> {
  return sql.begin(async (tx) => {
    const rows =
      await tx`UPDATE cluster_nodes SET heartbeat_at = now(), memory_full = ${state.full}, memory_bytes = ${state.memoryBytes} WHERE node_id = ${nodeId} RETURNING 1`
    if (rows.length === 0) return false
    await tx`UPDATE cluster_shards SET expires_at = now() + ${leaseMs} * interval '1 millisecond' WHERE node_id = ${nodeId}`
    return true
  })
}

/** Nodes whose last heartbeat is within the lease, oldest first. */
export function liveNodes(sql: Queryable, leaseMs: number) {
  return sql<NodeRow[]>`
    SELECT node_id, url, started_at, heartbeat_at, memory_full AS full, memory_bytes::float8 AS memory_bytes FROM cluster_nodes
    WHERE heartbeat_at > now() - ${leaseMs} * interval '1 millisecond' ORDER BY started_at, node_id`
}

/** Unexpired holds of live nodes. */
export function liveHolds(sql: Queryable, leaseMs: number) {
  return sql<ShardHoldRow[]>`
    SELECT s.environment_id, s.shard, s.node_id, s.state, s.rows FROM cluster_shards s
    JOIN cluster_nodes n ON n.node_id = s.node_id
    WHERE s.expires_at > now() AND n.heartbeat_at > now() - ${leaseMs} * interval '1 millisecond'
    ORDER BY s.environment_id, s.shard, s.node_id`
}

export function environmentShardCounts(sql: Queryable) {
  return sql<Array<{ id: string; shards: number; name: string }>>`SELECT id, shards, name FROM environments ORDER BY created_at, id`
}

export async function claimShard(sql: Sql, hold: { environmentId: string; shard: number; nodeId: string }, leaseMs: number): Promise<void> {
  await sql`
    INSERT INTO cluster_shards (environment_id, shard, node_id, state, expires_at)
    VALUES (${hold.environmentId}, ${hold.shard}, ${hold.nodeId}, 'loading', now() + ${leaseMs} * interval '1 millisecond')
    ON CONFLICT (environment_id, shard, node_id) DO UPDATE SET state = 'loading', expires_at = EXCLUDED.expires_at`
}

export async function markShardReady(sql: Sql, hold: { environmentId: string; shard: number; nodeId: string }, rows: number): Promise<void> {
  await sql`UPDATE cluster_shards SET state = 'ready', rows = ${rows} WHERE environment_id = ${hold.environmentId} AND shard = ${hold.shard} AND node_id = ${hold.nodeId}`
}

export async function releaseShard(sql: Sql, hold: { environmentId: string; shard: number; nodeId: string }): Promise<void> {
  await sql`DELETE FROM cluster_shards WHERE environment_id = ${hold.environmentId} AND shard = ${hold.shard} AND node_id = ${hold.nodeId}`
}

export async function deregisterNode(sql: Sql, nodeId: string): Promise<void> {
  await sql`DELETE FROM cluster_nodes WHERE node_id = ${nodeId}`
}

/** The ids of an environment's members in one shard (to take them out of memory when the shard goes). */
export async function memberIdsOfShard(sql: Sql, environmentId: string, shard: number, shards: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM members WHERE environment_id = ${environmentId} AND palmvein_shard_of(id, ${shards}) = ${shard}`
  return rows.map((row) => row.id)
}
