// Node-to-node routes of cluster mode (docs/scale-out.md), served only when PALMVEIN_NODE_URL is
// set and never in the OpenAPI document: a peer's search of the shards this node serves.
import { createHash, timingSafeEqual } from 'node:crypto'
import { CLUSTER_SEARCH_PATH, CLUSTER_SECRET_HEADER } from '../../cluster/peer-client.js'
import { ServiceError } from '../../errors.js'
import { TemplateError } from '../../matcher/index.js'
import { defineRoute, type Route } from '../route.js'
import { Body, Type } from '../schema.js'

const digest = (text: string) => createHash('sha256').update(text).digest()

/** Constant time: the digests have one length whatever was sent. */
export function clusterSecretMatches(sent: string | undefined, secret: string): boolean {
  return sent !== undefined && timingSafeEqual(digest(sent), digest(secret))
}

const searchShards = defineRoute({
  operationId: 'clusterSearchShards', method: 'post', path: CLUSTER_SEARCH_PATH, auth: ['none'], access: 'none', tags: ['Cluster'],
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
  responses: [{ status: 200, description: 'the best rows of those shards here' }],
  async handler({ app, body, headers }) {
    const cluster = app.config.cluster
    if (!cluster || !clusterSecretMatches(headers[CLUSTER_SECRET_HEADER], cluster.secret)) {
      throw new ServiceError('unauthenticated', 'node-to-node calls need the cluster secret')
    }
    const bytes = Buffer.from(body.probe, 'base64')
    const probe = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    try {
      const hits = await app.galleries.searchShards(body.environment_id, body.shards, body.min_seq, probe, {
        k: body.k, partition: body.partition, mode: body.mode, candidates: body.candidates,
      })
      return { hits }
    } catch (error) {
      // A probe the matcher refuses (wrong length, all zeros) is the caller's mistake.
      if (error instanceof TemplateError) throw new ServiceError('invalid_request', `probe: ${error.message}`, { errors: [{ path: '/probe', message: error.message }] })
      throw error
    }
  },
})

export const clusterRoutes: Route[] = [searchShards]
