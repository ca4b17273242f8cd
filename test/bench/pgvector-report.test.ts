// The report's pgvector section, on a small recorded peer result: palmvein's latency as a ratio of
// each pgvector mode's, taken from palmvein's fastest mode that decides as the exact scan does;
// an index that was not built in time, and a skipped peer, said as such.
import { describe, expect, it } from 'vitest'
import type { ModeResult, PeerResult } from '../../bench/pgvector/pgvector-peer.js'
import { palmveinReference, pgvectorSection } from '../../bench/pgvector/pgvector-report.js'

const latency = (p50: number, p95: number, perSecond = 100) => [
  { clients: 1, count: 100, p50, p95, perSecond, loadAverage: 1.5 },
  { clients: 16, count: 1000, p50: p50 * 10, p95: p95 * 10, perSecond: perSecond * 4, loadAverage: 2.5 },
]
const mode = (
  engine: ModeResult['engine'],
  name: string,
  p50: number,
  p95: number,
  decisionAgreement: number,
  build: ModeResult['build'] = null,
): ModeResult => ({
  engine,
  mode: name,
  describe: name,
  build,
  agreement: { probes: 100, recall: decisionAgreement, decisionAgreement },
  latency: latency(p50, p95),
})

const peer = (twoStageAgreement: number): PeerResult => ({
  members: 100_000,
  rows: 200_000,
  dimension: 256,
  k: 10,
  probes: 100,
  threshold: 0.8,
  loadSeconds: 12.5,
  tableBytes: 240 * 2 ** 20,
  exactVsPalmveinExact: { probes: 100, recall: 1, decisionAgreement: 1 },
  modes: [
    mode('palmvein', 'exact', 2, 4, 1),
    mode('palmvein', 'two_stage', 0.5, 1, twoStageAgreement),
    mode('pgvector', 'exact', 100, 200, 1),
    mode('pgvector', 'hnsw', 5, 8, 0.99, { index: 'hnsw', seconds: 61.5, bytes: 400 * 2 ** 20 }),
    {
      ...mode('pgvector', 'binary_rerank', 0, 0, 0, { index: 'binary_hnsw', seconds: 1800, unfinished: 'not built within 1800 s' }),
      agreement: null,
      latency: [],
    },
  ],
})

const row = (markdown: string, name: string) =>
  markdown
    .split('\n')
    .find((line) => line.startsWith(`| ${name} |`))
    ?.slice(2, -2)
    .split(' | ')

describe('the pgvector section', () => {
  it("sets palmvein's fastest mode at 100 % decision agreement against each pgvector mode", () => {
    const markdown = pgvectorSection({ status: 'ok', sizes: [peer(1)] })
    expect(palmveinReference(peer(1), 1).mode).toBe('two_stage')
    // two_stage 0.5 / 1 ms over pgvector exact's 100 / 200 ms; HNSW's 5 / 8 ms.
    expect(row(markdown, 'pgvector exact')?.slice(6, 10)).toEqual(['100.0 / 200.0', '100', '0.0050× / 0.0050×', '1.5'])
    expect(row(markdown, 'pgvector hnsw')?.slice(2, 10)).toEqual(['61.5 s', '400 MiB', '99.00 %', '99.00 %', '5.00 / 8.00', '100', '0.10× / 0.13×', '1.5'])
    expect(row(markdown, 'pgvector binary_rerank')?.slice(2, 7)).toEqual(['not built within 1800 s', '', '', '', 'n/a'])
  })

  it('takes palmvein exact when two-stage disagrees with the exact scan on any probe', () => {
    expect(palmveinReference(peer(0.999), 16).mode).toBe('exact')
    const markdown = pgvectorSection({ status: 'ok', sizes: [peer(0.999)] })
    expect(row(markdown, 'pgvector hnsw')?.[12]).toBe('0.40× / 0.50×')
  })

  it('says why the peer was skipped, or that a size failed', () => {
    expect(pgvectorSection({ status: 'skipped', reason: 'no PostgreSQL server' })).toBe('pgvector: skipped (no PostgreSQL server).')
    expect(pgvectorSection({ status: 'ok', sizes: [{ members: 1_000_000, error: 'connection refused' }] })).toContain('Not measured: connection refused')
    expect(pgvectorSection(undefined)).toContain('Not measured in this run')
  })
})
