// Transactions: recorded by a project's terminals (Device-Com), listed and exported per project.
// The from/to window filters on `timestamp` (both ends inclusive); lists are newest first.
import type { AppContext } from '../app-context.js'
import { Nullable, Type, type Static } from '../http/schema.js'
import { newId, timestamp } from '../ids.js'
import { touchDeviceActivity } from '../store/devices.js'
import { insertTransaction, type TransactionRow } from '../store/transactions.js'

export const TRANSACTION_TYPES = ['payment', 'refund'] as const
export const TRANSACTION_STATES = ['pending', 'approved', 'declined', 'refunded'] as const

const Text = (maxLength: number) => Nullable(Type.String({ maxLength }))
const Money = (description: string) => Type.Number({ minimum: 0, maximum: 1e12, description })

export const TransactionSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  transaction_type: Type.Union(TRANSACTION_TYPES.map((value) => Type.Literal(value))),
  transaction_state: Type.Union(TRANSACTION_STATES.map((value) => Type.Literal(value))),
  amount: Type.Object({ base: Nullable(Type.Number()), tip: Nullable(Type.Number()), total: Nullable(Type.Number()) }),
  location: Nullable(Type.Object({ latitude: Type.Number(), longitude: Type.Number() }, { description: 'null when the terminal sent none' })),
  timestamp: Type.String({ format: 'date-time' }),
  address: Type.Object({
    line1: Text(200), line2: Text(200), city: Text(100), state: Text(100), country: Text(100), postal_code: Text(20),
  }),
  merchant: Type.Object({ name: Text(200), icon_path: Text(2048) }),
  vendor_payment_reference: Text(200),
  fee: Nullable(Type.Number()),
  currency: Type.String({ description: 'ISO 4217 code' }),
  vendor: Text(100),
  vendor_merchant_id: Text(200),
}, { $id: 'Transaction' })

const Optional = Type.Optional
/** What a terminal sends (POST /v1/device-com/transactions): the Transaction fields but id. */
export const TransactionInputSchema = {
  transaction_type: TransactionSchema.properties.transaction_type,
  transaction_state: TransactionSchema.properties.transaction_state,
  amount: Type.Object({
    base: Money('amount before tip'),
    tip: Optional(Nullable(Money('tip; null or absent when none'))),
    total: Money('amount charged'),
  }, { additionalProperties: false }),
  location: Optional(Nullable(Type.Object({
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
  }, { additionalProperties: false }))),
  timestamp: Optional(Type.String({ format: 'date-time', description: 'when the transaction happened; now when absent' })),
  address: Optional(Nullable(Type.Object({
    line1: Optional(Text(200)), line2: Optional(Text(200)), city: Optional(Text(100)),
    state: Optional(Text(100)), country: Optional(Text(100)), postal_code: Optional(Text(20)),
  }, { additionalProperties: false }))),
  merchant: Optional(Nullable(Type.Object({ name: Optional(Text(200)), icon_path: Optional(Text(2048)) }, { additionalProperties: false }))),
  vendor_payment_reference: Optional(Text(200)),
  fee: Optional(Nullable(Money('processing fee'))),
  currency: Type.String({ minLength: 3, maxLength: 3, pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code, e.g. EUR; stored upper-case' }),
  vendor: Optional(Text(100)),
  vendor_merchant_id: Optional(Text(200)),
}
const TransactionInputObject = Type.Object(TransactionInputSchema)
export type TransactionInput = Static<typeof TransactionInputObject>

export function transactionResource(row: TransactionRow) {
  return {
    id: row.id,
    transaction_type: row.transaction_type,
    transaction_state: row.transaction_state,
    amount: { base: row.base_amount, tip: row.tip_amount, total: row.total_amount },
    location: row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude },
    timestamp: timestamp(row.timestamp)!,
    address: {
      line1: row.address_line1, line2: row.address_line2, city: row.address_city,
      state: row.address_state, country: row.address_country, postal_code: row.address_postal_code,
    },
    merchant: { name: row.merchant_name, icon_path: row.merchant_icon_path },
    vendor_payment_reference: row.vendor_payment_reference,
    fee: row.fee,
    currency: row.currency!,
    vendor: row.vendor,
    vendor_merchant_id: row.vendor_merchant_id,
  }
}

export async function recordTransaction(app: AppContext, projectId: string, deviceId: string, input: TransactionInput) {
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
