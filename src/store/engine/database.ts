// One `postgres` client for both databases: a real PostgreSQL when DATABASE_URL is set, otherwise
// the embedded PGlite in the data directory, served by store/engine/pglite-server.ts in its own thread (to
// this process over MessageChannel ports, to a CLI joining it on loopback).
import { EventEmitter } from 'node:events'
import net from 'node:net'
import type { Duplex } from 'node:stream'
import postgres from 'postgres'
import type { Config } from '../../config.js'
import { watchAvailability } from './availability.js'
import { openEmbedded, type EmbeddedDatabase } from './embedded.js'
import { createNotificationListener } from './notification-listener.js'
import { postgresIsPatched } from './postgres-patch.js'
import type { Sql } from './sql.js'

export type { Queryable, Sql } from './sql.js'
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
  /**
   * `onReconnect` runs when a dropped notification connection is back (PostgreSQL): whatever was
   * notified meanwhile is lost, so the listener catches up from the database.
   */
  listen(channel: string, onPayload: (payload: string) => void, onReconnect?: () => void): Promise<{ unlisten(): Promise<void> }>
  /**
   * Moves whenever a change to the rows an API key's access check reads commits, before that
   * change's statement is answered (store/engine/pglite-activity.ts): what makes those checks cacheable.
   * Absent where this process cannot know in time: on PostgreSQL (other processes change rows, and
   * a NOTIFY arrives after their answer), and in a CLI that joined a service's embedded database.
   */
  accessVersion?: () => number
  /** The embedded database's thread, when this process serves it: a full collection in its isolate. */
  releaseGarbage?: () => Promise<void>
  /** False while the database cannot be reached (PostgreSQL only: the embedded one lives in this process). */
  readonly available: boolean
  /**
   * The health check: a round trip on PostgreSQL; on the embedded database this process serves, the
   * state of its thread, read at once (a SELECT 1 would queue behind every other client's statement).
   */
  health(): Promise<string>
  close(): Promise<void>
}

// int8 columns (nbf, iat, exp, counts) come back as numbers: they stay far below 2^53.
const int8AsNumber = {
  to: 20,
  from: [20],
  serialize: (value: number | bigint) => String(value),
  parse: (value: string) => Number(value),
}

/**
 * Every socket the clients opened, so an outage can cut them all at once. While the database is
 * known to be down the service's connections are refused at once: a query queued behind a cut
 * connection would otherwise wait out a fresh connection attempt against a silent network.
 */
export class SocketTracker {
  private readonly sockets = new Set<net.Socket>()
  private refusing: string | undefined

  /** postgres.js's `socket` option: a connecting socket it writes to at once (net buffers until connected). */
  readonly connect = (options: { host: string[]; port: number[]; path?: string | false }): net.Socket => {
    if (this.refusing !== undefined) {
      // Fails on postgres.js's first write, not before: a socket closed before that first flush
      // leaves the startup message queued in the client and its next connection never starts.
      const refused = new net.Socket()
      const error = Object.assign(new Error(`database unreachable: ${this.refusing}`), { code: 'DATABASE_CUT' })
      refused.write = () => {
        setImmediate(() => refused.destroy(error))
        return false
      }
      return refused
    }
    return this.connectAlways(options)
  }

  /** The availability probe's and the notification connection's: they must see the database return. */
  readonly connectAlways = (options: { host: string[]; port: number[]; path?: string | false }): net.Socket => {
    const socket = options.path ? net.connect(options.path) : net.connect(options.port[0], options.host[0])
    // Without it Nagle's algorithm holds a small write behind unacknowledged data until the
    // server's delayed ACK: a COPY's end message after its rows waited 40 ms.
    socket.setNoDelay(true)
    this.sockets.add(socket)
    socket.once('close', () => this.sockets.delete(socket))
    return socket
  }

  /** Fails every query in flight with DATABASE_CUT and refuses new connections until `reopen()`. */
  cut(reason: string): void {
    this.refusing = reason
    for (const socket of this.sockets) socket.destroy(Object.assign(new Error(`database connection cut: ${reason}`), { code: 'DATABASE_CUT' }))
  }

  /** The database is back: cut what was opened meanwhile (it may be stuck mid-handshake), then connect again. */
  reopen(): void {
    for (const socket of this.sockets) socket.destroy(Object.assign(new Error('the database is back; reconnecting'), { code: 'DATABASE_CUT' }))
    this.refusing = undefined
  }
}

// A connection attempt gives up after 2 s, so a database that went silent answers 503, not a hang.
const CONNECT_TIMEOUT_SECONDS = 2
const RECONNECT_DELAY_SECONDS = 0.05

export function createClient(options: {
  url?: string
  host?: string
  port?: number
  password?: string
  max?: number
  sockets?: SocketTracker
  /** A connection of another kind than TCP (the embedded database's thread in this process). */
  connect?: () => Duplex
  /** Connect even while the tracker refuses (the probe, the notification connection). */
  always?: boolean
  /** A connection that lives as long as the client (the notification connection). */
  persistent?: boolean
  /** Seconds a connection attempt may take (CONNECT_TIMEOUT_SECONDS unless given). */
  connectTimeoutSeconds?: number
  onnotify?(channel: string, payload: string): void
  onclose?(): void
}): Sql {
  const common = {
    ...(options.persistent ? { idle_timeout: 0, max_lifetime: 0, fetch_types: false } : {}),
    ...(options.onnotify ? { onnotify: options.onnotify } : {}),
    ...(options.onclose ? { onclose: options.onclose } : {}),
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutSeconds ?? CONNECT_TIMEOUT_SECONDS,
    // Reconnect at once: the default backoff grows to 20 s after an outage's failed attempts, and
    // the service would stay away that long after the database is back.
    backoff: () => RECONNECT_DELAY_SECONDS,
    ...(options.sockets ? { socket: options.always ? options.sockets.connectAlways : options.sockets.connect } : {}),
    ...(options.connect ? { socket: options.connect } : {}),
    onnotice: () => {},
    transform: { undefined: null },
    types: { int8: int8AsNumber },
    connection: { application_name: 'palmvein' },
  }
  const client = options.url
    ? postgres(options.url, common)
    : postgres({ ...common, host: options.host, port: options.port, user: 'postgres', password: options.password, database: 'postgres' })
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

export interface OpenOptions {
  max?: number
  log?: { warn(message: string): void; info(message: string): void }
  /** The service owns the embedded database's data directory (refused while another process serves it). */
  exclusive?: boolean
  /**
   * Probe PostgreSQL every 250 ms and cut every connection when it is silent for a second, so
   * requests answer 503 at once (a serving process). A command line run leaves it off: it has no
   * request to answer, and a late probe on a loaded machine would end a long import or dedup.
   */
  watchAvailability?: boolean
}

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'embeddedSharedBuffers'>>,
  options: OpenOptions = {},
): Promise<Database> {
  if (!postgresIsPatched()) {
    options.log?.warn(
      "DB: the installed postgres.js lacks palmvein's fixes (installed with --ignore-scripts?): a connection lost mid-transaction would end the process, a boot's COPY could stall a connection, and queries slow down as the pool's queue grows. Run: node node_modules/palmvein/scripts/patch-postgres.mjs",
    )
  }
  if (config.databaseUrl) return openPostgres(config.databaseUrl, options)
  return openEmbeddedDatabase(config, options)
}

/** A real PostgreSQL: the pool, an availability probe and a notification connection, all on one socket tracker. */
function openPostgres(databaseUrl: string, options: OpenOptions): Database {
  const sockets = new SocketTracker()
  const sql = createClient({ url: databaseUrl, max: options.max, sockets })
  // The probe's verdict is its deadline's (availability.ts), which allows for a blocked event
  // loop; postgres.js's own connect timer does not, and fired after a long synchronous task on a
  // busy machine, declaring a database down that had answered.
  const probe = createClient({ url: databaseUrl, max: 1, sockets, always: true, connectTimeoutSeconds: 30 })
  const listener = createNotificationListener(
    (hooks) => createClient({ url: databaseUrl, max: 1, sockets, always: true, persistent: true, ...hooks }),
    options.log,
  )
  const url = new URL(databaseUrl)
  const where = `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`
  const availability = options.watchAvailability
    ? watchAvailability({
        probe: async () => {
          await probe`SELECT 1`
        },
        onProbeFailed(reason, first) {
          sockets.cut(reason)
          if (first) options.log?.warn(`DB: ${where} is unreachable (${reason}); requests that need it answer 503 database_unavailable`)
        },
        onUp(downForMs) {
          sockets.reopen()
          options.log?.info(`DB: ${where} is reachable again after ${(downForMs / 1000).toFixed(1)} s`)
        },
      })
    : null
  return {
    sql,
    kind: 'postgres',
    get available() {
      return availability?.up ?? true
    },
    describe: where,
    notify: async (channel, payload) => {
      await sql.notify(channel, payload)
    },
    listen: (channel, onPayload, onReconnect) => listener.listen(channel, { onPayload, onReconnect }),
    async health() {
      await ping(sql)
      return 'ok (postgres)'
    },
    async close() {
      availability?.stop()
      await Promise.all([sql.end({ timeout: 5 }), probe.end({ timeout: 1 }), listener.close()])
    },
  }
}

/** The embedded PGlite in the data directory (served by this process, or joined over loopback). */
async function openEmbeddedDatabase(config: Pick<Config, 'dataDir'> & Partial<Pick<Config, 'embeddedSharedBuffers'>>, options: OpenOptions): Promise<Database> {
  const embedded: EmbeddedDatabase = await openEmbedded(config.dataDir, {
    exclusive: options.exclusive,
    sharedBuffers: config.embeddedSharedBuffers ?? undefined,
  })
  const sql = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: options.max, connect: embedded.thread?.connect })
  // The loopback server does not carry notifications; one process serves PGlite, so an emitter is exact.
  // One emitter per data directory: services sharing the in-process PGlite (tests) hear each other.
  const bus = embeddedBus(embedded.directory)
  const activity = embedded.thread?.activity
  return {
    sql,
    notify: async (channel, payload) => {
      bus.emit(channel, payload)
    },
    listen: async (channel, onPayload) => {
      bus.on(channel, onPayload)
      return {
        unlisten: async () => {
          bus.off(channel, onPayload)
        },
      }
    },
    kind: 'embedded',
    accessVersion: activity ? () => activity.accessVersion() : undefined,
    releaseGarbage: embedded.thread?.releaseGarbage,
    available: true,
    async health() {
      const thread = embedded.thread
      if (!thread) {
        await ping(sql)
        return 'ok (embedded, joined)'
      }
      if (thread.exited()) throw new Error("the embedded database's thread has stopped")
      const busy = thread.activity.busyForMs()
      if (busy > STUCK_AFTER_MS) throw new Error(`the embedded database has been running one statement for ${Math.round(busy / 1000)} s`)
      return busy > 0 ? `ok (embedded; a statement running for ${busy} ms)` : 'ok (embedded)'
    },
    describe: embedded.owned ? `embedded PGlite in ${embedded.directory}` : `embedded PGlite of the running service (port ${embedded.port})`,
    async close() {
      await sql.end({ timeout: 5 })
      await embedded.close()
    },
  }
}

// A unit of work running this long on the embedded database means it is stuck, not busy.
const STUCK_AFTER_MS = 60_000

/** The health check's round trip. */
export async function ping(sql: Sql): Promise<void> {
  await sql`SELECT 1`
}
