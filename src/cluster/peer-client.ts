// Node-to-node search calls: POST {node}/internal/cluster/search with the cluster secret. Not part
// of the public API (no OpenAPI entry); the route is in src/http/routes/cluster.ts.
import type { Hit, SearchOptions } from '../matcher/index.js'

export const CLUSTER_SEARCH_PATH = '/internal/cluster/search'
export const CLUSTER_SECRET_HEADER = 'x-palmvein-cluster-secret'
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

export async function searchPeer(nodeUrl: string, secret: string, request: PeerSearch): Promise<Hit[]> {
  const response = await fetch(`${nodeUrl}${CLUSTER_SEARCH_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [CLUSTER_SECRET_HEADER]: secret },
    body: JSON.stringify({
      environment_id: request.environmentId,
      shards: request.shards,
      min_seq: request.minSeq,
      probe: Buffer.from(request.probe.buffer, request.probe.byteOffset, request.probe.byteLength).toString('base64'),
      k: request.options.k ?? 1,
      ...(request.options.partition !== undefined ? { partition: request.options.partition } : {}),
      ...(request.options.mode !== undefined ? { mode: request.options.mode } : {}),
      ...(request.options.candidates !== undefined ? { candidates: request.options.candidates } : {}),
    }),
    signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
  })
  const body = await response.json().catch(() => null) as { hits?: Hit[]; detail?: string } | null
  if (!response.ok || !body?.hits) throw new Error(`peer answered ${response.status}${body?.detail ? `: ${body.detail}` : ''}`)
  return body.hits
}
