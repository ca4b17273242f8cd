// Bulk writes on PostgreSQL that commit without waiting for their WAL flush, and the wait that
// makes them durable afterwards. An import commits a batch every few milliseconds; waiting for each
// flush cost it ~4 % of its time. Only a crash of the database server itself can lose such a commit,
// and only until the WAL writer has flushed it (a fraction of a second later); the import's last
// commit, or `waitForDurableCommits`, comes before it reports anything as imported.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Queryable } from './database.js'

/** This transaction's commit returns before its WAL is on disk (PostgreSQL server only). */
export async function commitWithoutFlushWait(tx: Queryable): Promise<void> {
  await tx`SET LOCAL synchronous_commit = off`
}

/** Returns once every commit made so far is flushed (the WAL writer does it within ~3 × wal_writer_delay). */
export async function waitForDurableCommits(sql: Queryable): Promise<void> {
  const [{ lsn }] = await sql<{ lsn: string }[]>`SELECT pg_current_wal_insert_lsn()::text AS lsn`
  for (;;) {
    const [{ flushed }] = await sql<{ flushed: boolean }[]>`SELECT pg_current_wal_flush_lsn() >= ${lsn}::pg_lsn AS flushed`
    if (flushed) return
    await sleep(20)
  }
}
