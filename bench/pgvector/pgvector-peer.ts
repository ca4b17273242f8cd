// The peer a user would build instead of palmvein: PostgreSQL + pgvector, on the same members and
// probes as palmvein's matcher in the same process and run. One size: a synthetic population
// (both palms of each member, as enrolled), probes half mated (a later session of an enrolled
// palm) and half non-mated; palmvein's gallery searched exact and two-stage; pgvector's table
// searched exact, through HNSW, IVFFlat and a binary-quantized HNSW with exact re-ranking. Every
// mode's answers are set against pgvector's exact scan (recall@k of rows, identify decision).
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import postgres from 'postgres'
import { createMatcher, createSyntheticPopulation } from '@palmvein/matcher'
import { scratchDatabase } from '../service/scratch-database.mjs'
import { agreementWithExact, DEFAULT_DECISION, decisionOf, type Agreement } from './agreement.js'
import { buildIndex, createGalleryTable, loadGallery, pgvectorModes, searchWith, type IndexBuild } from './pgvector-gallery.js'
import { closedLoop, onePass, type LatencyRow, type Search } from './search-latency.js'

export interface PeerOptions {
  serverUrl: string
  seed: number
  dimension: number
  probes: number
  k: number
  clients: number[]
  durationSeconds: number
  /** Candidates of palmvein's two-stage search and of pgvector's binary re-ranking. */
  candidates: number
  /** Longest the one-client pass of one mode may take (the exact scan at 1M members is slow). */
  passBudgetSeconds: number
  indexTimeoutSeconds: number
  maintenanceWorkMem: string
}

export interface ModeResult {
  engine: 'palmvein' | 'pgvector'
  mode: string
  describe: string
  build: IndexBuild | null
  agreement: Agreement | null
  latency: LatencyRow[]
}

export interface PeerResult {
  members: number
  rows: number
  dimension: number
  k: number
  probes: number
  threshold: number
  loadSeconds: number
  tableBytes: number
  /** pgvector's exact decisions against palmvein's exact ones (float32 vs int8 scores). */
  exactVsPalmveinExact: Agreement
  modes: ModeResult[]
}

const HANDS = ['left', 'right'] as const
const NON_MATED = 100_000

export async function runPgvectorPeer(members: number, options: PeerOptions, log: (line: string) => void): Promise<PeerResult> {
  const { dimension, k } = options
  const rows = 2 * members
  const population = createSyntheticPopulation({ seed: options.seed, dimension, identities: members + NON_MATED })
  const gallery = new Int8Array(rows * dimension)
  for (let member = 0; member < members; member++)
    HANDS.forEach((hand, side) => gallery.set(population.captureInt8(member, hand, 0, 0), (2 * member + side) * dimension))
  // Even probes are mated (session 1 of an enrolled palm), odd ones are palms never enrolled.
  const probes = Array.from({ length: options.probes }, (_, index) => {
    const identity = index % 2 === 0 ? (index * 7919) % members : members + (index % NON_MATED)
    return population.captureInt8(identity, HANDS[(index >> 1) % 2], 1, index)
  })

  const modes: ModeResult[] = []
  const measure = async (search: Search, budget: number, count = probes.length) => {
    const pass = await onePass(search, probes.slice(0, count), budget)
    const latency = [pass.latency]
    for (const clients of options.clients.filter((count) => count > 1)) latency.push(await closedLoop(search, probes, clients, options.durationSeconds))
    return { answers: pass.answers, latency }
  }
  const describeLatency = (latency: LatencyRow[]) =>
    latency
      .map((row) => `${row.clients} client${row.clients === 1 ? '' : 's'} p50 ${row.p50} ms p95 ${row.p95} ms (load ${row.loadAverage.toFixed(2)})`)
      .join('; ')

  // palmvein, in process: the embeddable matcher the service's identify calls.
  const matcher = await createMatcher({ dimension, threads: 2 })
  const palmvein = matcher.createGallery()
  for (let row = 0; row < rows; row++)
    palmvein.upsert(String(row >> 1), gallery.subarray(row * dimension, (row + 1) * dimension), { partition: HANDS[row & 1] })
  const palmveinAnswers = new Map<string, Awaited<ReturnType<Search>>[]>()
  for (const mode of ['exact', 'two_stage'] as const) {
    const search: Search = (probe) => palmvein.search(probe, { k, mode, candidates: options.candidates })
    const { answers, latency } = await measure(search, Number.POSITIVE_INFINITY)
    palmveinAnswers.set(mode, answers)
    modes.push({
      engine: 'palmvein',
      mode,
      describe: mode === 'exact' ? 'every row scored (int8)' : `sign-bit stage 1, ${options.candidates} candidates re-scored exactly`,
      build: null,
      agreement: null,
      latency,
    })
    log(`  palmvein ${mode}: ${describeLatency(latency)}`)
  }
  await matcher.close()

  const database = await scratchDatabase(options.serverUrl, `palmvein_pgvector_${members}_${randomBytes(4).toString('hex')}`)
  const sql = postgres(database.url, { max: 1, onnotice: () => {} })
  try {
    const table = 'gallery'
    await createGalleryTable(sql, table, dimension)
    let started = performance.now()
    await loadGallery(sql, table, gallery, dimension)
    const loadSeconds = (performance.now() - started) / 1000
    const [{ bytes: tableBytes }] = await sql`SELECT pg_total_relation_size('gallery')::float8 AS bytes`
    log(`  pgvector: ${rows.toLocaleString('en-US')} rows loaded in ${loadSeconds.toFixed(1)} s (table ${(Number(tableBytes) / 2 ** 20).toFixed(0)} MiB)`)

    let exact: Awaited<ReturnType<Search>>[] = []
    let built: IndexBuild | null = null
    for (const mode of pgvectorModes(rows, options.candidates)) {
      if (built?.index !== mode.index) {
        started = performance.now()
        built = await buildIndex(sql, table, mode.index, {
          dimension,
          rows,
          timeoutSeconds: options.indexTimeoutSeconds,
          maintenanceWorkMem: options.maintenanceWorkMem,
        })
        if (mode.index !== 'none')
          log(
            `  pgvector ${mode.index}: ${'unfinished' in built ? built.unfinished : `built in ${built.seconds.toFixed(1)} s, ${(built.bytes / 2 ** 20).toFixed(0)} MiB`} (load ${os.loadavg()[0].toFixed(2)})`,
          )
      }
      const result: ModeResult = {
        engine: 'pgvector',
        mode: mode.name,
        describe: mode.describe,
        build: mode.index === 'none' ? null : built,
        agreement: null,
        latency: [],
      }
      modes.push(result)
      if ('unfinished' in built) continue
      const client = postgres(database.url, { max: Math.max(...options.clients), onnotice: () => {}, connection: mode.settings })
      try {
        const search = searchWith(client, table, mode, dimension, k)
        // The exact pass decides how many probes every mode answers (it may run out of budget).
        const { answers, latency } =
          mode.index === 'none' ? await measure(search, options.passBudgetSeconds) : await measure(search, Number.POSITIVE_INFINITY, exact.length)
        if (mode.index === 'none') exact = answers
        result.latency = latency
        result.agreement = agreementWithExact(exact, answers, k)
        log(
          `  pgvector ${mode.name}: recall@${k} ${(100 * result.agreement.recall).toFixed(2)} %, decisions ${(100 * result.agreement.decisionAgreement).toFixed(2)} % over ${exact.length} probes; ${describeLatency(latency)}`,
        )
      } finally {
        await client.end({ timeout: 5 })
      }
    }
    for (const result of modes.filter((mode) => mode.engine === 'palmvein'))
      result.agreement = agreementWithExact(exact, palmveinAnswers.get(result.mode)!.slice(0, exact.length), k)
    const exactVsPalmveinExact = agreementWithExact(palmveinAnswers.get('exact')!.slice(0, exact.length), exact, k)
    const found = exact.filter((answer) => decisionOf(answer, DEFAULT_DECISION).startsWith('Found')).length
    log(
      `  exact decisions: ${found} of ${exact.length} probes Found; pgvector exact agrees with palmvein exact on ${(100 * exactVsPalmveinExact.decisionAgreement).toFixed(2)} %`,
    )
    return {
      members,
      rows,
      dimension,
      k,
      probes: exact.length,
      threshold: DEFAULT_DECISION.match_threshold,
      loadSeconds,
      tableBytes: Number(tableBytes),
      exactVsPalmveinExact,
      modes,
    }
  } finally {
    await sql.end({ timeout: 5 })
    await database.drop()
  }
}
