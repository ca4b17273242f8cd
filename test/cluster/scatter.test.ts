// Scatter-gather against peers that misbehave: one that never answers (hedged: the search is
// answered by another replica while that request is still open), one that says it does not serve
// the shard (failed over), and a shard whose every replica fails (503 shard_unavailable).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createPeerVerifier, peerSigningKey } from '../../src/cluster/peer-signature.js'
import { createScatter, type ShardDirectory } from '../../src/cluster/scatter.js'
import { ServiceError } from '../../src/errors.js'
import type { EnvironmentRow } from '../../src/store/organizations.js'

const SECRET = 'x'.repeat(32)
const verifier = createPeerVerifier(peerSigningKey(SECRET), 30_000)
const environment = { id: '0190c8a4-1c3e-7c1b-8d2e-123456789abc', shards: 2, dimension: 4 } as EnvironmentRow
const probe = Int8Array.from([1, 2, 3, 4])

interface Peer {
  url: string
  asked: number
  open: number
  abandoned: number
  close(): Promise<void>
}

/** A fake node: `answer` decides what it does with each search (undefined: never answers). */
async function peer(answer: (body: { shards: number[] }) => { status: number; body: unknown } | undefined): Promise<Peer> {
  const hanging: http.ServerResponse[] = []
  const state = { asked: 0, open: 0, abandoned: 0, closing: false }
  const server = http.createServer((request, response) => {
    let text = ''
    request.on('data', (chunk) => {
      text += chunk
    })
    request.on('end', () => {
      state.asked += 1
      // Signed with the cluster key, never carrying the secret itself.
      expect(verifier.check({ method: request.method!, target: request.url!, body: text }, request.headers as Record<string, string>)).toBeNull()
      expect(JSON.stringify(request.headers)).not.toContain(SECRET)
      const reply = answer(JSON.parse(text))
      if (!reply) {
        state.open += 1
        hanging.push(response)
        // The caller gave up on it (its timeout): a hedge would have left it open.
        response.on('close', () => {
          if (!state.closing) state.abandoned += 1
        })
        return
      }
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get asked() {
      return state.asked
    },
    get open() {
      return state.open
    },
    get abandoned() {
      return state.abandoned
    },
    async close() {
      state.closing = true
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

const hits = (id: string, score: number) => ({ status: 200, body: { hits: [{ id, score, partition: 'left' }] } })

describe('scatter-gather', () => {
  const peers: Record<string, Peer> = {}
  beforeAll(async () => {
    peers.silent = await peer(() => undefined)
    peers.fast = await peer((body) => hits(`fast-${body.shards.join('')}`, 0.5 + body.shards.length / 10))
    peers.notServing = await peer(() => ({ status: 503, body: { code: 'shard_unavailable', detail: 'not here' } }))
    peers.broken = await peer(() => ({ status: 500, body: { code: 'internal' } }))
  })
  const scatters: Array<{ close(): Promise<void> }> = []
  afterAll(async () => {
    for (const scatter of scatters) await scatter.close()
    for (const each of Object.values(peers)) await each.close()
  })
  const scatterOver = (replicas: Record<number, string[]>, overrides: Partial<ShardDirectory> = {}) => {
    const directory: ShardDirectory = {
      selfId: 'self',
      replicas: (_, shard) => replicas[shard] ?? [],
      urlOf: (nodeId) => peers[nodeId]?.url,
      servesHere: () => false,
      refresh: async () => {},
      ...overrides,
    }
    const scatter = createScatter({ directory, peer: { secret: SECRET }, hedgeMs: 20, log: pino({ level: 'silent' }), searchHere: async () => [] })
    scatters.push(scatter)
    return scatter
  }

  it('answers from another replica while a silent one still has the request', async () => {
    const scatter = scatterOver({ 0: ['silent', 'fast'], 1: ['silent', 'fast'] })
    for (let run = 0; run < 12; run++) {
      const answer = await scatter.search(environment, probe, { k: 2 }, 0)
      // Both shards answered by "fast" (in one request, or in two when the silent node was asked first).
      expect(
        answer
          .map((hit) => hit.id)
          .sort()
          .join(),
      ).toMatch(/^fast-01$|^fast-0,fast-1$/)
    }
    // The silent node was asked (and is asked again: never marked failed), and no request to it was
    // given up on: each answer came from the hedge while the silent request was still open.
    expect(peers.silent.open).toBeGreaterThan(1)
    expect(peers.silent.abandoned).toBe(0)
  })

  it('fails over when a replica does not serve the shard or fails', async () => {
    const scatter = scatterOver({ 0: ['notServing', 'fast'], 1: ['broken', 'fast'] })
    // The random pick takes the first healthy replica, the failing one: left to chance, a run asked
    // only "fast" half the time, and six runs in a row did so once in 64.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0)
    try {
      for (let run = 0; run < 6; run++) {
        const answer = await scatter.search(environment, probe, { k: 3 }, 0)
        expect(answer.every((hit) => hit.id.startsWith('fast-'))).toBe(true)
      }
    } finally {
      random.mockRestore()
    }
    expect(peers.notServing.asked + peers.broken.asked).toBeGreaterThan(0)
  })

  it('a shard with no replica left in its view: re-read from the database before answering 503', async () => {
    // The view is stale: the only replica it knows gave the shard up, and "fast" holds it now.
    const replicas: Record<number, string[]> = { 0: ['fast'], 1: ['notServing'] }
    const reads: number[] = []
    const scatter = scatterOver(replicas, {
      refresh: async (since) => {
        reads.push(since)
        replicas[1] = ['notServing', 'fast']
      },
    })
    const before = performance.now()
    const answer = await scatter.search(environment, probe, { k: 3 }, 0)
    expect(answer.every((hit) => hit.id.startsWith('fast-'))).toBe(true)
    // Re-read by reads that started after the search (a hedge of a slow "fast" may ask for another).
    expect(reads.length).toBeGreaterThan(0)
    for (const since of reads) expect(since).toBeGreaterThanOrEqual(before)
  })

  it('answers 503 shard_unavailable, naming the shard, when every replica of it fails', async () => {
    const scatter = scatterOver({ 0: ['fast'], 1: ['broken', 'notServing'] })
    const error = await scatter.search(environment, probe, { k: 1 }, 0).catch((caught) => caught)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ code: 'shard_unavailable' })
    expect(error.detail).toMatch(/^shard 1 of environment 0190c8a4-1c3e-7c1b-8d2e-123456789abc has no live replica/)
    const none = await scatterOver({ 0: ['fast'] })
      .search(environment, probe, { k: 1 }, 0)
      .catch((caught) => caught)
    expect(none.detail).toMatch(/^shard 1 of environment/)
  })
})
