// The gallery as a user would build it on PostgreSQL + pgvector: one table of rows (row id, the
// template as vector(D): its int8 components L2-normalised, so that the inner product `<#>` is
// minus the cosine palmvein scores with), its indexes at pgvector's documented defaults, and the
// queries of each search mode. Row r is member r >> 1's left (even) or right (odd) palm.
import type { Sql } from 'postgres'
import type { GalleryHit } from '../../src/domain/identification/identify-decision.js'

export type PgvectorIndex = 'none' | 'hnsw' | 'ivfflat' | 'binary_hnsw'

export interface PgvectorMode {
  name: string
  /** What the report says the mode is. */
  describe: string
  index: PgvectorIndex
  /** Session settings (sent at connection start, so each query is one round trip). */
  settings: Record<string, string>
  /** binary_hnsw only: candidates the Hamming index returns for the exact re-ranking. */
  candidates?: number
}

/** pgvector's README: lists = rows / 1000 up to 1M rows, sqrt(rows) above; probes = sqrt(lists) to start with. */
export function ivfflatLists(rows: number): number {
  return Math.max(1, Math.round(rows <= 1_000_000 ? rows / 1000 : Math.sqrt(rows)))
}

/** The modes measured, in the order their indexes are built (one index on the table at a time). */
export function pgvectorModes(rows: number, rerankCandidates: number): PgvectorMode[] {
  const lists = ivfflatLists(rows)
  const probes = Math.max(1, Math.round(Math.sqrt(lists)))
  return [
    { name: 'exact', describe: 'no index: ORDER BY embedding <#> probe LIMIT k (parallel sequential scan)', index: 'none', settings: {} },
    { name: 'hnsw', describe: 'HNSW vector_ip_ops, m 16, ef_construction 64, ef_search 40 (defaults)', index: 'hnsw', settings: {} },
    {
      name: 'ivfflat',
      describe: `IVFFlat vector_ip_ops, lists ${lists} (${rows <= 1_000_000 ? 'rows / 1000' : 'sqrt(rows)'}), probes 1 (default)`,
      index: 'ivfflat',
      settings: {},
    },
    {
      name: `ivfflat_probes_${probes}`,
      describe: `the same IVFFlat index, probes ${probes} (sqrt(lists), the README's starting point)`,
      index: 'ivfflat',
      settings: { 'ivfflat.probes': String(probes) },
    },
    {
      name: 'binary_rerank',
      describe: `binary_quantize HNSW (bit_hamming_ops, defaults), ef_search ${rerankCandidates}: ${rerankCandidates} candidates re-ranked by <#>`,
      index: 'binary_hnsw',
      settings: { 'hnsw.ef_search': String(rerankCandidates) },
      candidates: rerankCandidates,
    },
  ]
}

/** Creates the extension and an empty table `table` (dropped first if it exists). */
export async function createGalleryTable(sql: Sql, table: string, dimension: number): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS vector`
  await sql`DROP TABLE IF EXISTS ${sql(table)}`
  await sql.unsafe(`CREATE TABLE ${table} (id integer PRIMARY KEY, embedding vector(${dimension}) NOT NULL)`)
}

/** Loads `rows` (row-major int8, `dimension` a row) by COPY into a staging table, normalised on the way in. */
export async function loadGallery(sql: Sql, table: string, rows: Int8Array, dimension: number, onProgress?: (done: number) => void): Promise<void> {
  const count = rows.length / dimension
  const staging = `${table}_staging`
  await sql.unsafe(`CREATE UNLOGGED TABLE ${staging} (id integer, raw vector(${dimension}))`)
  const copy = await sql.unsafe(`COPY ${staging} (id, raw) FROM STDIN`).writable()
  const batch = 1000
  for (let first = 0; first < count; first += batch) {
    const lines: string[] = []
    for (let row = first; row < Math.min(count, first + batch); row++)
      lines.push(`${row}\t[${rows.subarray(row * dimension, (row + 1) * dimension).join(',')}]\n`)
    if (!copy.write(lines.join(''))) await new Promise((resolve) => copy.once('drain', resolve))
    onProgress?.(Math.min(count, first + batch))
  }
  await new Promise<void>((resolve, reject) => copy.end((error?: Error | null) => (error ? reject(error) : resolve())))
  await sql.unsafe(`INSERT INTO ${table} SELECT id, l2_normalize(raw) FROM ${staging}`)
  await sql.unsafe(`DROP TABLE ${staging}`)
  await sql.unsafe(`VACUUM ANALYZE ${table}`)
}

const INDEX_DDL: Record<Exclude<PgvectorIndex, 'none'>, (table: string, dimension: number, rows: number) => string> = {
  hnsw: (table) => `CREATE INDEX ${table}_hnsw ON ${table} USING hnsw (embedding vector_ip_ops)`,
  ivfflat: (table, _dimension, rows) =>
    `CREATE INDEX ${table}_ivfflat ON ${table} USING ivfflat (embedding vector_ip_ops) WITH (lists = ${ivfflatLists(rows)})`,
  binary_hnsw: (table, dimension) =>
    `CREATE INDEX ${table}_binary_hnsw ON ${table} USING hnsw ((binary_quantize(embedding)::bit(${dimension})) bit_hamming_ops)`,
}

export type IndexBuild = { index: PgvectorIndex; seconds: number; bytes: number } | { index: PgvectorIndex; seconds: number; unfinished: string }

/**
 * Drops the table's other index and builds `index` within `timeoutSeconds`, with
 * `maintenanceWorkMem` (an HNSW build is fast only while its graph fits in it).
 */
export async function buildIndex(
  sql: Sql,
  table: string,
  index: PgvectorIndex,
  options: { dimension: number; rows: number; timeoutSeconds: number; maintenanceWorkMem: string },
): Promise<IndexBuild> {
  for (const other of Object.keys(INDEX_DDL)) await sql.unsafe(`DROP INDEX IF EXISTS ${table}_${other}`)
  if (index === 'none') return { index, seconds: 0, bytes: 0 }
  const started = performance.now()
  try {
    await sql.begin(async (transaction) => {
      await transaction.unsafe(`SET LOCAL maintenance_work_mem = '${options.maintenanceWorkMem}'`)
      await transaction.unsafe(`SET LOCAL statement_timeout = ${Math.round(options.timeoutSeconds * 1000)}`)
      await transaction.unsafe(INDEX_DDL[index](table, options.dimension, options.rows))
    })
  } catch (error) {
    const seconds = (performance.now() - started) / 1000
    const code = (error as { code?: string }).code
    return { index, seconds, unfinished: code === '57014' ? `not built within ${options.timeoutSeconds} s` : (error as Error).message }
  }
  const seconds = (performance.now() - started) / 1000
  const [{ bytes }] = await sql`SELECT pg_relation_size(${`${table}_${index}`}::regclass)::float8 AS bytes`
  return { index, seconds, bytes: Number(bytes) }
}

/** The probe as pgvector's text input, normalised like the gallery's rows. */
export function probeText(probe: Int8Array): string {
  const norm = Math.sqrt(probe.reduce((sum, value) => sum + value * value, 0)) || 1
  return `[${Array.from(probe, (value) => (value / norm).toPrecision(9)).join(',')}]`
}

const hitOf = (row: { id: number; score: number }): GalleryHit => ({
  id: String(row.id >> 1),
  partition: row.id & 1 ? 'right' : 'left',
  score: row.score,
})

/** The mode's query: the best `k` rows for a probe, best first (score = cosine); prepared, one round trip. */
export function searchWith(sql: Sql, table: string, mode: PgvectorMode, dimension: number, k: number): (probe: Int8Array) => Promise<GalleryHit[]> {
  const bits = `bit(${dimension})`
  const query =
    mode.index === 'binary_hnsw'
      ? `SELECT id, -(embedding <#> $1::vector) AS score FROM (
           SELECT id, embedding FROM ${table}
           ORDER BY binary_quantize(embedding)::${bits} <~> binary_quantize($1::vector)::${bits} LIMIT ${mode.candidates ?? 40}
         ) candidates ORDER BY embedding <#> $1::vector LIMIT ${k}`
      : `SELECT id, -(embedding <#> $1::vector) AS score FROM ${table} ORDER BY embedding <#> $1::vector LIMIT ${k}`
  return async (probe) => {
    const rows = await sql.unsafe<{ id: number; score: number }[]>(query, [probeText(probe)], { prepare: true })
    return rows.map(hitOf)
  }
}
