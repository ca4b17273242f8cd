// Node-to-node search calls: POST {node}/internal/cluster/search, signed (peer-signature.ts), over
// TLS when the node URL is https. Not part of the public API (no OpenAPI entry); the route is in
// src/http/routes/cluster.ts.
import tls from 'node:tls'
import type { Pool } from 'undici'
import type { Hit, SearchOptions } from '@palmvein/matcher'
import { peerSigningKey, signPeerRequest } from './peer-signature.js'
import { undici } from '../runtime/undici-on-demand.js'

export const CLUSTER_SEARCH_PATH = '/internal/cluster/search'
/** A peer's own traffic of the last minutes (metrics/traffic-window.ts), gathered for the operator API. */
export const CLUSTER_TRAFFIC_PATH = '/internal/cluster/traffic'
// A peer that has not answered by then is treated as failed (its shards are asked elsewhere).
const PEER_TIMEOUT_MS = 5_000

export interface PeerSearch {
  environmentId: string
  shards: readonly number[]
  /** The peer first applies every gallery change up to this one (an enrollment's duplicate check must see them all). */
  minSeq: number
  probe: Int8Array
  options: SearchOptions
}

export interface PeerClient {
  search(nodeUrl: string, request: PeerSearch): Promise<Hit[]>
  /** The peer's traffic of the last `seconds` (its answer's JSON, as the peer route gives it). */
  traffic(nodeUrl: string, seconds: number): Promise<unknown>
  /** Closes the connections to every peer (at shutdown). */
  close(): Promise<void>
}

/**
 * One keep-alive pool per peer: undici's request API costs a fraction of fetch's per call, which
 * every identify pays once per remote shard group.
 */
export function createPeerClient(options: { secret: string /** PEM CA trusted besides the system's (PALMVEIN_PEER_CA_FILE). */; ca?: Buffer }): PeerClient {
  const key = peerSigningKey(options.secret)
  // Only cluster nodes make a peer client: undici loads now, not in the first search's time (a
  // slow first answer would steer the replica choice away from the peer).
  const loading = undici()
  loading.catch(() => {})
  const pools = new Map<string, Pool>()
  const poolFor = async (nodeUrl: string): Promise<Pool> => {
    let pool = pools.get(nodeUrl)
    if (!pool) {
      const { Pool } = await loading
      // Another call may have made the pool while undici loaded.
      pool = pools.get(nodeUrl)
      if (pool) return pool
      pool = new Pool(nodeUrl, {
        connections: 16,
        keepAliveTimeout: 60_000,
        headersTimeout: PEER_TIMEOUT_MS,
        bodyTimeout: PEER_TIMEOUT_MS,
        // An https node URL: the peer's certificate is checked against the system CAs and this one.
        ...(options.ca ? { connect: { ca: [...tls.rootCertificates, options.ca.toString()] } } : {}),
      })
      pools.set(nodeUrl, pool)
    }
    return pool
  }
  return {
    async search(nodeUrl, request) {
      const body = JSON.stringify({
        environment_id: request.environmentId,
        shards: request.shards,
        min_seq: request.minSeq,
        probe: Buffer.from(request.probe.buffer, request.probe.byteOffset, request.probe.byteLength).toString('base64'),
        k: request.options.k ?? 1,
        ...(request.options.partition !== undefined ? { partition: request.options.partition } : {}),
        ...(request.options.mode !== undefined ? { mode: request.options.mode } : {}),
        ...(request.options.candidates !== undefined ? { candidates: request.options.candidates } : {}),
      })
      const response = await (await poolFor(nodeUrl)).request({
        path: CLUSTER_SEARCH_PATH,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signPeerRequest(key, { method: 'POST', target: CLUSTER_SEARCH_PATH, body }) },
        body,
      })
      const answer = (await response.body.json().catch(() => null)) as { hits?: Hit[]; detail?: string } | null
      if (response.statusCode !== 200 || !answer?.hits) throw new Error(`peer answered ${response.statusCode}${answer?.detail ? `: ${answer.detail}` : ''}`)
      return answer.hits
    },
    async traffic(nodeUrl, seconds) {
      const target = `${CLUSTER_TRAFFIC_PATH}?seconds=${seconds}`
      const response = await (await poolFor(nodeUrl)).request({
        path: target,
        method: 'GET',
        headers: signPeerRequest(key, { method: 'GET', target, body: '' }),
      })
      const answer = await response.body.json().catch(() => null)
      if (response.statusCode !== 200 || !answer) throw new Error(`peer answered ${response.statusCode}`)
      return answer
    },
    async close() {
      const open = [...pools.values()]
      pools.clear()
      // At shutdown nothing waits for these answers any more (the HTTP server has drained).
      await Promise.all(open.map((pool) => pool.destroy().catch(() => {})))
    },
  }
}
