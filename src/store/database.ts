// One `postgres` client for both databases: a real PostgreSQL when DATABASE_URL is set, otherwise
// the embedded PGlite in the data directory, served on loopback by store/pglite-server.ts.
import { EventEmitter } from 'node:events'
import postgres from 'postgres'
import type { Config } from '../config.js'
import { openEmbedded, type EmbeddedDatabase } from './embedded.js'

export type Sql = postgres.Sql<Record<string, never>>
/** A client or an open transaction (`sql.begin(tx => ...)`): what every store function takes. */
export type Queryable = Sql | postgres.TransactionSql<Record<string, never>>
export type DatabaseKind = 'postgres' | 'embedded'

export interface Database {
  sql: Sql
  kind: DatabaseKind
  /** A description safe to log (no password). */
  describe: string
  /**
   * Tell every service process on this database (LISTEN/NOTIFY on PostgreSQL; in-process on the
   * embedded database, which only one process serves). Call it after the change has committed.
   */
  notify(channel: string, payload: string): Promise<void>
  listen(channel: string, onPayload: (payload: string) => void): Promise<{ unlisten(): Promise<void> }>
  close(): Promise<void>
}

// int8 columns (nbf, iat, exp, counts) come back as numbers: they stay far below 2^53.
const int8AsNumber = {
  to: 20,
  from: [20],
  serialize: (value: number | bigint) => String(value),
  parse: (value: string) => Number(value),
}

export function createClient(options: { url?: string; host?: string; port?: number; max?: number }): Sql {
  const common = {
    max: options.max ?? 10,
    onnotice: () => {},
    transform: { undefined: null },
    types: { int8: int8AsNumber },
    connection: { application_name: 'palmvein' },
  }
  const client = options.url
    ? postgres(options.url, common)
    : postgres({ ...common, host: options.host, port: options.port, user: 'postgres', database: 'postgres' })
  return client as unknown as Sql
}

const embeddedBuses = new Map<string, EventEmitter>()
function embeddedBus(directory: string): EventEmitter {
  let bus = embeddedBuses.get(directory)
  if (!bus) {
    bus = new EventEmitter().setMaxListeners(0)
    embeddedBuses.set(directory, bus)
  }
  return bus
}

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>, options: { max?: number } = {}): Promise<Database> {
  if (config.databaseUrl) {
    const sql = createClient({ url: config.databaseUrl, max: options.max })
    const url = new URL(config.databaseUrl)
    return {
      sql,
      kind: 'postgres',
      describe: `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`,
      notify: async (channel, payload) => { await sql.notify(channel, payload) },
      listen: async (channel, onPayload) => {
        const { unlisten } = await sql.listen(channel, onPayload)
        return { unlisten }
      },
      close: () => sql.end({ timeout: 5 }),
    }
  }
  const embedded: EmbeddedDatabase = await openEmbedded(config.dataDir)
  const sql = createClient({ host: embedded.host, port: embedded.port, max: options.max })
  // The loopback server does not carry notifications; one process serves PGlite, so an emitter is exact.
  // One emitter per data directory: services sharing the in-process PGlite (tests) hear each other.
  const bus = embeddedBus(embedded.directory)
  return {
    sql,
    notify: async (channel, payload) => { bus.emit(channel, payload) },
    listen: async (channel, onPayload) => {
      bus.on(channel, onPayload)
      return { unlisten: async () => { bus.off(channel, onPayload) } }
    },
    kind: 'embedded',
    describe: embedded.owned ? `embedded PGlite in ${embedded.directory}` : `embedded PGlite of the running service (port ${embedded.port})`,
    async close() {
      await sql.end({ timeout: 5 })
      await embedded.close()
    },
  }
}

/** The health check's round trip. */
export async function ping(sql: Sql): Promise<void> {
  await sql`SELECT 1`
}
