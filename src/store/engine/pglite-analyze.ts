// PGlite has no autovacuum, so nothing refreshes the planner's statistics: a table that grew from
// empty keeps the estimate of a few rows, and a query such as a project's newest scan results
// then reads and sorts every row of the project (147 ms at 250 000 rows, against 0.2 ms once
// analyzed; under 1 000 GETs/s the embedded database fell behind by minutes in `npm run bench`).
// This stands in for autoanalyze: tables whose file grew by a fifth (and 8 pages) since their
// last ANALYZE are analyzed again, so each table is analyzed a logarithmic number of times.
import type { PGlite } from '@electric-sql/pglite'

export const ANALYZE_EVERY_MS = 60_000
// PGlite has one session, so an ANALYZE holds every client's statements while it samples. At
// PostgreSQL's default target of 100 (30 000 rows sampled) a 200k-row palm_templates took 279 ms,
// a stall that REST GETs felt as a p95 over 200 ms in `npm run bench`; a target of 10 samples
// 3 000 rows in 19 ms, and keeps the row counts and coarse histograms these plans need.
const STATISTICS_TARGET = 10

/** Runs one piece of maintenance; on the server, between clients' units (PgliteServer.whenIdle). */
export type RunBetweenUnits = <T>(task: () => Promise<T>) => Promise<T>

const runNow: RunBetweenUnits = (task) => task()

/**
 * Analyzes the public tables that grew since their statistics were taken; returns their names.
 * Each table is a piece of its own, so statements that clients sent meanwhile run between two
 * tables instead of behind all of them: after an import of 20 000 members the four grown tables
 * took 144 ms in one piece (78 ms of it palm_templates), a stall REST GETs saw as p99 > 100 ms.
 */
export async function analyzeGrownTables(db: PGlite, runBetweenUnits: RunBetweenUnits = runNow): Promise<string[]> {
  const { rows } = await runBetweenUnits(() =>
    db.query<{ name: string }>(`
    SELECT c.oid::regclass::text AS name FROM pg_class c
    WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
      AND pg_relation_size(c.oid) / 8192 > greatest(c.relpages, 0) * 1.2 + 8
    ORDER BY 1`),
  )
  // regclass text is the table's name quoted where it needs to be.
  for (const { name } of rows) {
    await runBetweenUnits(() => db.exec(`BEGIN; SET LOCAL default_statistics_target = ${STATISTICS_TARGET}; ANALYZE ${name}; COMMIT`))
  }
  return rows.map(({ name }) => name)
}
