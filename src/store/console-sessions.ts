// Queries of the console's sign-in links and sessions. Secrets are never stored: only their SHA-256.
import type { Sql } from './engine/database.js'

export interface ConsoleSecretRow {
  id: string
  subject: string
  secret_hash: Buffer
  expires_at: Date
}

export async function insertSignInLink(sql: Sql, link: { id: string; secret_hash: Buffer; subject: string; expires_at: Date }): Promise<void> {
  await sql`INSERT INTO console_sign_in_links ${sql(link)}`
}

/**
 * Marks the link used, if it is unused and unexpired: one UPDATE, so two redemptions racing on
 * any number of processes cannot both succeed. The caller checks the secret against the hash.
 */
export async function consumeSignInLink(sql: Sql, id: string): Promise<ConsoleSecretRow | null> {
  const [row] = await sql<ConsoleSecretRow[]>`
    UPDATE console_sign_in_links SET used_at = now()
    WHERE id = ${id} AND used_at IS NULL AND expires_at > now()
    RETURNING id, subject, secret_hash, expires_at`
  return row ?? null
}

export async function insertConsoleSession(
  sql: Sql,
  session: { id: string; secret_hash: Buffer; subject: string; link_id: string; expires_at: Date },
): Promise<void> {
  await sql`INSERT INTO console_sessions ${sql(session)}`
}

/** The session if it is still open (not expired, not signed out). */
export async function openConsoleSession(sql: Sql, id: string): Promise<ConsoleSecretRow | null> {
  const [row] = await sql<ConsoleSecretRow[]>`
    SELECT id, subject, secret_hash, expires_at FROM console_sessions
    WHERE id = ${id} AND ended_at IS NULL AND expires_at > now()`
  return row ?? null
}

export async function endConsoleSession(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE console_sessions SET ended_at = now() WHERE id = ${id} AND ended_at IS NULL`
}
