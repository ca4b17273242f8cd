// Node-to-node routes of cluster mode (docs/scale-out.md), served only when PALMVEIN_NODE_URL is
// set and never in the OpenAPI document: a peer's search of the shards this node serves. On the
// public port, or on the peer listener alone when PALMVEIN_PEER_PORT is set.
import { CLUSTER_SEARCH_PATH, CLUSTER_TRAFFIC_PATH } from '../../cluster/peer-client.js'
import type { PeerVerifier } from '../../cluster/peer-signature.js'
import { ServiceError } from '../../errors.js'
import { TemplateError } from '@palmvein/matcher'
import { defineRoute, routeTemplate, type Route, type VerifiableRequest } from '../route.js'
import { Body, Type } from '../schema.js'

/**
 * Refuses a request not signed with the cluster key (or stale, or replayed) before anything else
 * runs: counted in the metrics and kept in the audit trail's platform chain, reason included.
 * Every refusal gets the same answer, so a caller learns nothing of why.
 */
function peerCheck(verifier: PeerVerifier, action: string) {
  return ({ method, target, headers, body, app, requestId, clientAddress }: VerifiableRequest) => {
    const refusal = verifier.check({ method, target, body }, headers)
    if (!refusal) return
    app.metrics.peerRefused(refusal)
    app.audit.record({
      org_id: null,
      created_at: new Date(),
      request_id: requestId,
      project_id: null,
      actor_kind: 'anonymous',
      actor_id: null,
      action,
      resource_ids: { peer_refusal: refusal },
      status: 401,
      client_address: clientAddress || null,
      user_agent: headers['user-agent']?.slice(0, 256) ?? null,
    })
    throw new ServiceError('unauthenticated', 'node-to-node calls must be signed with the cluster key')
  }
}

const searchShards = (verifier: PeerVerifier) =>
  defineRoute({
    operationId: 'clusterSearchShards',
    method: 'post',
    path: CLUSTER_SEARCH_PATH,
    auth: ['none'],
    access: 'none',
    tags: ['Cluster'],
    internal: true,
    summary: "A peer's search of shards this node serves",
    body: Body({
      environment_id: Type.String({ format: 'uuid' }),
      shards: Type.Array(Type.Integer({ minimum: 0, maximum: 1023 }), { minItems: 1, maxItems: 1024 }),
      min_seq: Type.Integer({ minimum: 0 }),
      probe: Type.String({ maxLength: 1024, pattern: '^[A-Za-z0-9+/]*={0,2}$' }),
      k: Type.Integer({ minimum: 1, maximum: 1000 }),
      partition: Type.Optional(Type.String({ maxLength: 64 })),
      mode: Type.Optional(Type.Union([Type.Literal('exact'), Type.Literal('two_stage'), Type.Literal('auto')])),
      candidates: Type.Optional(Type.Integer({ minimum: 1, maximum: 65536 })),
    }),
    verifyRequest: peerCheck(verifier, `POST ${routeTemplate({ path: CLUSTER_SEARCH_PATH })}`),
    responses: [{ status: 200, description: 'the best rows of those shards here' }],
    async handler({ app, body }) {
      const bytes = Buffer.from(body.probe, 'base64')
      const probe = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      try {
        const hits = await app.galleries.searchShards(body.environment_id, body.shards, body.min_seq, probe, {
          k: body.k,
          partition: body.partition,
          mode: body.mode,
          candidates: body.candidates,
        })
        return { hits }
      } catch (error) {
        // A probe the matcher refuses (wrong length, all zeros) is the caller's mistake.
        if (error instanceof TemplateError)
          throw new ServiceError('invalid_request', `probe: ${error.message}`, { errors: [{ path: '/probe', message: error.message }] })
        throw error
      }
    },
  })

const trafficHere = (verifier: PeerVerifier) =>
  defineRoute({
    operationId: 'clusterTraffic',
    method: 'get',
    path: CLUSTER_TRAFFIC_PATH,
    auth: ['none'],
    access: 'none',
    tags: ['Cluster'],
    internal: true,
    usesDatabase: false,
    summary: "This node's traffic of the last minutes, for the node answering GET /v1/operations/traffic",
    query: Type.Object({ seconds: Type.Integer({ minimum: 1, maximum: 3600 }) }, { additionalProperties: false }),
    verifyRequest: peerCheck(verifier, `GET ${routeTemplate({ path: CLUSTER_TRAFFIC_PATH })}`),
    responses: [{ status: 200, description: "this node's traffic" }],
    async handler({ app, query }) {
      return app.traffic.snapshot(query.seconds)
    },
  })

/** The node-to-node routes, each checked by `verifier` (one per node: it remembers the nonces it accepted). */
export const clusterRoutes = (verifier: PeerVerifier): Route[] => [searchShards(verifier), trafficHere(verifier)]
