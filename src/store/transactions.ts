// Queries of transactions recorded by a project's terminals. Listing is newest first by
// `timestamp`, then id; the export reads the same order in keyset pages (no cursor held open:
// on the embedded database every connection shares one session).
import type { Sql } from './engine/database.js'

export interface TransactionRow {
  id: string
  project_id: string
  device_id: string | null
  transaction_type: 'payment' | 'refund'
  transaction_state: 'pending' | 'approved' | 'declined' | 'refunded'
  base_amount: number | null
  tip_amount: number | null
  total_amount: number | null
  fee: number | null
  currency: string | null
  vendor: string | null
  vendor_payment_reference: string | null
  vendor_merchant_id: string | null
  merchant_name: string | null
  merchant_icon_path: string | null
  address_line1: string | null
  address_line2: string | null
  address_city: string | null
  address_state: string | null
  address_country: string | null
  address_postal_code: string | null
  latitude: number | null
  longitude: number | null
  timestamp: Date
  created_at: Date
}

export type NewTransaction = Omit<TransactionRow, 'created_at'>

export async function insertTransaction(sql: Sql, row: NewTransaction): Promise<TransactionRow> {
  const [inserted] = await sql<TransactionRow[]>`INSERT INTO transactions ${sql(row as never)} RETURNING *`
  return inserted
}

export interface Window {
  from: Date
  to: Date
}

/** Rows strictly after `after` in (timestamp DESC, id DESC) order, at most `limit`. */
export function transactionsPage(sql: Sql, projectId: string, window: Window, limit: number, after: { timestamp: Date; id: string } | null) {
  return after
    ? sql<TransactionRow[]>`
        SELECT * FROM transactions
        WHERE project_id = ${projectId} AND "timestamp" BETWEEN ${window.from} AND ${window.to}
          AND ("timestamp", id) < (${after.timestamp}::timestamptz, ${after.id}::uuid)
        ORDER BY "timestamp" DESC, id DESC LIMIT ${limit}`
    : sql<TransactionRow[]>`
        SELECT * FROM transactions
        WHERE project_id = ${projectId} AND "timestamp" BETWEEN ${window.from} AND ${window.to}
        ORDER BY "timestamp" DESC, id DESC LIMIT ${limit}`
}
