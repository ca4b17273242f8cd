// CSV export of a project's transactions: the spec's flat columns in order, RFC 4180 (CRLF record
// ends, fields quoted when they hold a comma, quote or line break) by csv-stringify. Streamed in
// keyset pages, so a large range never sits in memory. Text cells that a spreadsheet would run
// as a formula (starting with = + - @ tab or CR) are prefixed with ' (OWASP CSV injection
// guard); numbers are never altered. The JSON list keeps the raw values.
import { stringify } from 'csv-stringify/sync'
import type { AppContext } from '../app-context.js'
import { timestamp } from '../ids.js'
import { transactionsPage, type TransactionRow, type Window } from '../store/transactions.js'

export const CSV_COLUMNS = [
  'id', 'transaction_type', 'transaction_state', 'timestamp', 'base_amount', 'tip_amount', 'total_amount', 'fee',
  'currency', 'vendor', 'vendor_payment_reference', 'vendor_merchant_id', 'merchant_name', 'merchant_icon_path',
  'address_line1', 'address_line2', 'address_city', 'address_state', 'address_country', 'address_postal_code',
  'latitude', 'longitude',
] as const

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'
const PAGE_ROWS = 1000

function csv(rows: TransactionRow[], header: boolean): string {
  const records = rows.map((row) => CSV_COLUMNS.map((column) => (column === 'timestamp' ? timestamp(row.timestamp) : row[column])))
  return stringify(records, {
    header,
    columns: header ? [...CSV_COLUMNS] : undefined,
    record_delimiter: 'windows',
    escape_formulas: true,
  })
}

/**
 * The export as chunks. The first page is read before this returns, so a failure there is an
 * ordinary error answer; later pages are read while the previous one is being sent.
 */
export async function exportTransactions(app: AppContext, projectId: string, window: Window): Promise<AsyncIterable<string>> {
  const first = await transactionsPage(app.sql, projectId, window, PAGE_ROWS, null)
  async function* chunks() {
    // The header alone when the window is empty (csv-stringify writes no header for no records).
    yield first.length ? csv(first, true) : `${CSV_COLUMNS.join(',')}\r\n`
    let page = first
    while (page.length === PAGE_ROWS) {
      const last = page[page.length - 1]
      page = await transactionsPage(app.sql, projectId, window, PAGE_ROWS, { timestamp: last.timestamp, id: last.id })
      if (page.length) yield csv(page, false)
    }
  }
  return chunks()
}
