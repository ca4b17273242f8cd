// Transactions: recorded by a project's terminals (Device-Com), listed and exported per project.
// The from/to window filters on `timestamp` (both ends inclusive); lists are newest first, read in
// keyset pages so a large range never sits in memory.
import type { DomainResources } from '../resources.js'
import { newId } from '../../ids.js'
import { touchDeviceActivity } from '../../store/devices.js'
import type { Sql } from '../../store/engine/database.js'
import { insertTransaction, transactionsPage, type TransactionRow, type Window } from '../../store/transactions.js'

export const TRANSACTION_TYPES = ['payment', 'refund'] as const
export const TRANSACTION_STATES = ['pending', 'approved', 'declined', 'refunded'] as const

type Text = string | null | undefined
/** What a terminal sends to record a transaction (validated by the route's schema). */
export interface TransactionInput {
  transaction_type: (typeof TRANSACTION_TYPES)[number]
  transaction_state: (typeof TRANSACTION_STATES)[number]
  amount: { base: number; tip?: number | null; total: number }
  location?: { latitude: number; longitude: number } | null
  /** RFC 3339; now when absent. */
  timestamp?: string
  address?: { line1?: Text; line2?: Text; city?: Text; state?: Text; country?: Text; postal_code?: Text } | null
  merchant?: { name?: Text; icon_path?: Text } | null
  vendor_payment_reference?: Text
  fee?: number | null
  currency: string
  vendor?: Text
  vendor_merchant_id?: Text
}

export async function recordTransaction(app: Pick<DomainResources, 'sql'>, projectId: string, deviceId: string, input: TransactionInput) {
  // Stored at millisecond precision, like every timestamp on the wire (and the export's keyset).
  const at = input.timestamp === undefined ? new Date() : new Date(input.timestamp)
  const row = await insertTransaction(app.sql, {
    id: newId(),
    project_id: projectId,
    device_id: deviceId,
    transaction_type: input.transaction_type,
    transaction_state: input.transaction_state,
    base_amount: input.amount.base,
    tip_amount: input.amount.tip ?? null,
    total_amount: input.amount.total,
    fee: input.fee ?? null,
    currency: input.currency.toUpperCase(),
    vendor: input.vendor ?? null,
    vendor_payment_reference: input.vendor_payment_reference ?? null,
    vendor_merchant_id: input.vendor_merchant_id ?? null,
    merchant_name: input.merchant?.name ?? null,
    merchant_icon_path: input.merchant?.icon_path ?? null,
    address_line1: input.address?.line1 ?? null,
    address_line2: input.address?.line2 ?? null,
    address_city: input.address?.city ?? null,
    address_state: input.address?.state ?? null,
    address_country: input.address?.country ?? null,
    address_postal_code: input.address?.postal_code ?? null,
    latitude: input.location?.latitude ?? null,
    longitude: input.location?.longitude ?? null,
    timestamp: at,
  })
  await touchDeviceActivity(app.sql, deviceId)
  return row
}

const PAGE_ROWS = 1000

/**
 * The window's rows in pages of the list's order (timestamp DESC, id DESC). The first page is read
 * before this returns, so a failure there is an ordinary error answer; later pages are read while
 * the previous one is being sent.
 */
export async function transactionPages(sql: Sql, projectId: string, window: Window): Promise<AsyncIterable<TransactionRow[]>> {
  const first = await transactionsPage(sql, projectId, window, PAGE_ROWS, null)
  async function* following() {
    let page = first
    yield page
    while (page.length === PAGE_ROWS) {
      const last = page[page.length - 1]
      page = await transactionsPage(sql, projectId, window, PAGE_ROWS, { timestamp: last.timestamp, id: last.id })
      if (page.length) yield page
    }
  }
  return following()
}
