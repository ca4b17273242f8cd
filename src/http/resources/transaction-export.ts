// The transactions of a window on the wire, streamed page by page so a large range never sits in
// memory: the JSON list, and the CSV export with the spec's flat columns in order, RFC 4180 (CRLF
// record ends, fields quoted when they hold a comma, quote or line break) by csv-stringify. CSV text
// cells that a spreadsheet would run as a formula (starting with = + - @ tab or CR) get a leading
// ' (OWASP CSV injection guard); numbers are never altered, and the JSON list keeps raw values.
import { stringify } from 'csv-stringify/sync'
import { timestamp } from '../../ids.js'
import type { TransactionRow } from '../../store/transactions.js'
import { transactionResource } from './transactions.js'

export const CSV_COLUMNS = [
  'id',
  'transaction_type',
  'transaction_state',
  'timestamp',
  'base_amount',
  'tip_amount',
  'total_amount',
  'fee',
  'currency',
  'vendor',
  'vendor_payment_reference',
  'vendor_merchant_id',
  'merchant_name',
  'merchant_icon_path',
  'address_line1',
  'address_line2',
  'address_city',
  'address_state',
  'address_country',
  'address_postal_code',
  'latitude',
  'longitude',
] as const

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'
function csv(rows: TransactionRow[], header: boolean): string {
  const records = rows.map((row) => CSV_COLUMNS.map((column) => (column === 'timestamp' ? timestamp(row.timestamp) : row[column])))
  return stringify(records, {
    header,
    columns: header ? [...CSV_COLUMNS] : undefined,
    record_delimiter: 'windows',
    escape_formulas: true,
  })
}

/** The CSV export as chunks: the header, then one chunk per page. */
export function transactionsCsv(source: AsyncIterable<TransactionRow[]>): AsyncIterable<string> {
  return (async function* chunks() {
    let first = true
    for await (const page of source) {
      // The header alone when the window is empty (no records, nothing for csv-stringify to head).
      yield first && page.length === 0 ? `${CSV_COLUMNS.join(',')}\r\n` : csv(page, first)
      first = false
    }
  })()
}

/** The JSON list as chunks of one array, so a wide window never sits in memory either. */
export function transactionsJson(source: AsyncIterable<TransactionRow[]>): AsyncIterable<string> {
  return (async function* chunks() {
    let separator = '['
    for await (const page of source) {
      if (page.length === 0) continue
      yield separator + page.map((row) => JSON.stringify(transactionResource(row))).join(',')
      separator = ','
    }
    yield separator === '[' ? '[]' : ']'
  })()
}
