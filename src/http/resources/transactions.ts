// The Transaction resource and what a terminal sends to record one (spec "Scans, transactions,
// project"; Device-Com).
import { TRANSACTION_STATES, TRANSACTION_TYPES } from '../../domain/devices/transactions.js'
import { timestamp } from '../../ids.js'
import type { TransactionRow } from '../../store/transactions.js'
import { Nullable, Text, Type } from '../schema.js'

const OptionalText = (maxLength: number) => Nullable(Text({ maxLength }))

const Money = (description: string) => Type.Number({ minimum: 0, maximum: 1e12, description })

export const TransactionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    transaction_type: Type.Union(TRANSACTION_TYPES.map((value) => Type.Literal(value))),
    transaction_state: Type.Union(TRANSACTION_STATES.map((value) => Type.Literal(value))),
    amount: Type.Object({ base: Nullable(Type.Number()), tip: Nullable(Type.Number()), total: Nullable(Type.Number()) }),
    location: Nullable(Type.Object({ latitude: Type.Number(), longitude: Type.Number() }, { description: 'null when the terminal sent none' })),
    timestamp: Type.String({ format: 'date-time' }),
    address: Type.Object({
      line1: OptionalText(200),
      line2: OptionalText(200),
      city: OptionalText(100),
      state: OptionalText(100),
      country: OptionalText(100),
      postal_code: OptionalText(20),
    }),
    merchant: Type.Object({ name: OptionalText(200), icon_path: OptionalText(2048) }),
    vendor_payment_reference: OptionalText(200),
    fee: Nullable(Type.Number()),
    currency: Type.String({ description: 'ISO 4217 code' }),
    vendor: OptionalText(100),
    vendor_merchant_id: OptionalText(200),
  },
  { $id: 'Transaction' },
)

const Optional = Type.Optional

/** What a terminal sends (POST /v1/device-com/transactions): the Transaction fields but id. */
export const TransactionInputSchema = {
  transaction_type: TransactionSchema.properties.transaction_type,
  transaction_state: TransactionSchema.properties.transaction_state,
  amount: Type.Object(
    {
      base: Money('amount before tip'),
      tip: Optional(Nullable(Money('tip; null or absent when none'))),
      total: Money('amount charged'),
    },
    { additionalProperties: false },
  ),
  location: Optional(
    Nullable(
      Type.Object(
        {
          latitude: Type.Number({ minimum: -90, maximum: 90 }),
          longitude: Type.Number({ minimum: -180, maximum: 180 }),
        },
        { additionalProperties: false },
      ),
    ),
  ),
  timestamp: Optional(Type.String({ format: 'date-time', description: 'when the transaction happened; now when absent' })),
  address: Optional(
    Nullable(
      Type.Object(
        {
          line1: Optional(OptionalText(200)),
          line2: Optional(OptionalText(200)),
          city: Optional(OptionalText(100)),
          state: Optional(OptionalText(100)),
          country: Optional(OptionalText(100)),
          postal_code: Optional(OptionalText(20)),
        },
        { additionalProperties: false },
      ),
    ),
  ),
  merchant: Optional(Nullable(Type.Object({ name: Optional(OptionalText(200)), icon_path: Optional(OptionalText(2048)) }, { additionalProperties: false }))),
  vendor_payment_reference: Optional(OptionalText(200)),
  fee: Optional(Nullable(Money('processing fee'))),
  currency: Type.String({ minLength: 3, maxLength: 3, pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code, e.g. EUR; stored upper-case' }),
  vendor: Optional(OptionalText(100)),
  vendor_merchant_id: Optional(OptionalText(200)),
}

export function transactionResource(row: TransactionRow) {
  return {
    id: row.id,
    transaction_type: row.transaction_type,
    transaction_state: row.transaction_state,
    amount: { base: row.base_amount, tip: row.tip_amount, total: row.total_amount },
    location: row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude },
    timestamp: timestamp(row.timestamp)!,
    address: {
      line1: row.address_line1,
      line2: row.address_line2,
      city: row.address_city,
      state: row.address_state,
      country: row.address_country,
      postal_code: row.address_postal_code,
    },
    merchant: { name: row.merchant_name, icon_path: row.merchant_icon_path },
    vendor_payment_reference: row.vendor_payment_reference,
    fee: row.fee,
    currency: row.currency!,
    vendor: row.vendor,
    vendor_merchant_id: row.vendor_merchant_id,
  }
}
