// The client types every store function takes, apart from the database that opens them (so the
// engine's parts, the notification listener among them, can name them without importing it).
import type postgres from 'postgres'

export type Sql = postgres.Sql<Record<string, never>>
/** A client or an open transaction (`sql.begin(tx => ...)`): what every store function takes. */
export type Queryable = Sql | postgres.TransactionSql<Record<string, never>>
