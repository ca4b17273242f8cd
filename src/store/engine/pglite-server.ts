// Serves one PGlite instance to many PostgreSQL wire-protocol connections on loopback.
//
// Why not pglite-socket's server: its queue interleaves single protocol messages of different
// connections, so another connection's Bind or BEGIN can land between a query's Bind and Execute
// and destroy its portal ("portal does not exist"). PGlite has one session, so the unit of work
// must be a whole exchange: every message up to and including Sync (extended protocol) or one
// simple Query. Units run one at a time; while a connection has a transaction open, only that
// connection's units run (the others wait), and a connection that goes away mid-transaction is
// rolled back.
import { timingSafeEqual } from 'node:crypto'
import net from 'node:net'
import type { Duplex } from 'node:stream'
import { BACKUP_REQUEST, sendBackup } from './embedded-backup.js'
import type { PgliteActivity } from './pglite-activity.js'
import type { PGlite } from '@electric-sql/pglite'

const SSL_REQUEST = 80877103
const CANCEL_REQUEST = 80877102
const GSS_REQUEST = 80877104
const PROTOCOL_3 = 196608

// Messages after which the backend answers and the client waits: a unit ends here.
const UNIT_END = new Set(['S'.charCodeAt(0), 'Q'.charCodeAt(0), 'X'.charCodeAt(0), 'H'.charCodeAt(0), 'c'.charCodeAt(0), 'f'.charCodeAt(0)])
const TERMINATE = 'X'.charCodeAt(0)
const READY_FOR_QUERY = 'Z'.charCodeAt(0)
const NOTIFICATION_RESPONSE = 'A'.charCodeAt(0)
const PASSWORD_MESSAGE = 'p'.charCodeAt(0)

/** AuthenticationCleartextPassword: loopback only, and the password is random per start. */
const ASK_PASSWORD = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])

function fatal(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`)
  const head = Buffer.alloc(5)
  head.write('E', 0)
  head.writeInt32BE(4 + fields.length, 1)
  return Buffer.concat([head, fields])
}

interface Unit {
  connection: Connection
  messages: Buffer[]
  /** Work of the server's own (maintenance), run on PGlite directly when no connection holds the session. */
  task?: () => Promise<void>
}

class Connection {
  private buffer: Buffer = Buffer.alloc(0)
  private pending: Buffer[] = []
  private started = false
  /** The startup message, held until the password is checked. */
  private heldStartup: Buffer | null = null
  /** Last transaction status this connection saw in ReadyForQuery: I, T or E. */
  transactionStatus = 'I'
  /** Whether the current unit's output ended with ReadyForQuery (else the exchange goes on: COPY, Flush). */
  sawReady = false
  closed = false

  constructor(
    readonly socket: Duplex,
    private readonly server: PgliteServer,
  ) {}

  receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) return
        const length = this.buffer.readInt32BE(0)
        const code = this.buffer.readInt32BE(4)
        if (code === SSL_REQUEST || code === GSS_REQUEST) {
          this.buffer = this.buffer.subarray(8)
          this.socket.write('N')
          continue
        }
        if (code === CANCEL_REQUEST) {
          this.buffer = this.buffer.subarray(length)
          continue
        }
        if (this.buffer.length < length) return
        const startup = Buffer.from(this.buffer.subarray(0, length))
        this.buffer = this.buffer.subarray(length)
        if (code === BACKUP_REQUEST) {
          this.server.backup(this, startup.subarray(8))
          return
        }
        this.started = code === PROTOCOL_3
        if (this.started) {
          // PGlite has no authentication of its own: ask for the password before it sees anything.
          this.heldStartup = startup
          this.socket.write(ASK_PASSWORD)
        } else this.server.enqueue({ connection: this, messages: [startup] })
        continue
      }
      if (this.buffer.length < 5) return
      const length = 1 + this.buffer.readInt32BE(1)
      if (this.buffer.length < length) return
      const message = Buffer.from(this.buffer.subarray(0, length))
      this.buffer = this.buffer.subarray(length)
      if (this.heldStartup) {
        if (!this.passwordAccepted(message)) {
          this.socket.end(fatal('28P01', 'password authentication failed (the embedded database takes the password in pglite.json)'))
          this.buffer = Buffer.alloc(0)
          return
        }
        const startup = this.heldStartup
        this.heldStartup = null
        this.server.enqueue({ connection: this, messages: [startup] })
        continue
      }
      this.pending.push(message)
      if (UNIT_END.has(message[0])) {
        this.server.enqueue({ connection: this, messages: this.pending })
        this.pending = []
      }
    }
  }

  private passwordAccepted(message: Buffer): boolean {
    if (message[0] !== PASSWORD_MESSAGE) return false
    const end = message.indexOf(0, 5)
    return this.server.acceptsPassword(message.subarray(5, end < 0 ? message.length : end))
  }

  /** Track ReadyForQuery's status byte in the backend's output (messages may span chunks). */
  private outputTail: Buffer = Buffer.alloc(0)
  observeOutput(data: Uint8Array): void {
    let buffer = this.outputTail.length ? Buffer.concat([this.outputTail, data]) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    while (buffer.length >= 5) {
      const length = 1 + buffer.readInt32BE(1)
      if (buffer.length < length) break
      if (buffer[0] === READY_FOR_QUERY) {
        this.transactionStatus = String.fromCharCode(buffer[5])
        this.sawReady = true
      } else if (buffer[0] === NOTIFICATION_RESPONSE) {
        // After the sender's process id: the channel, NUL-terminated.
        this.server.notified(buffer.toString('utf8', 9, buffer.indexOf(0, 9)))
      }
      buffer = buffer.subarray(length)
    }
    this.outputTail = Buffer.from(buffer)
  }
}

/** A Terminate message in a unit's batches. */
const END_SESSION = Symbol('terminate')
/** Bytes of messages handed to PGlite in one call (a COPY's data arrives as one unit of many). */
const BATCH_BYTES = 1 << 20

/**
 * A unit's messages as few PGlite calls as possible: PGlite's loop reads every message in the
 * buffer it is given, and each call has a fixed cost (buffers, a file-system sync, awaits) that a
 * Bind, an Execute and a Sync paid three times. A Terminate stays apart (the server answers it).
 */
function* protocolBatches(messages: readonly Buffer[]): Generator<Uint8Array | typeof END_SESSION> {
  let batch: Buffer[] = []
  let bytes = 0
  const flush = () => {
    const joined = batch.length === 1 ? batch[0] : Buffer.concat(batch, bytes)
    batch = []
    bytes = 0
    return joined
  }
  for (const message of messages) {
    if (message[0] === TERMINATE && message.length === 5) {
      if (batch.length > 0) yield flush()
      yield END_SESSION
      continue
    }
    if (bytes > 0 && bytes + message.length > BATCH_BYTES) yield flush()
    batch.push(message)
    bytes += message.length
  }
  if (batch.length > 0) yield flush()
}

export class PgliteServer {
  private readonly server: net.Server
  private readonly connections = new Set<Connection>()
  private queue: Unit[] = []
  private running = false
  /** The connection whose transaction is open: only its units may run. */
  private owner: Connection | null = null

  private readonly directory?: string
  private readonly activity?: PgliteActivity
  private readonly onNotification?: (channel: string) => void

  /**
   * `password`: what every connection must present (cleartext over loopback). `directory`: PGlite's
   * files, for backups; `activity`: where the unit running now is shown to the service's thread;
   * `onNotification`: a NOTIFY on a channel the session LISTENs to, seen in the committing unit's
   * answer before it is passed on (PGlite has one session: whichever connection commits gets it).
   */
  constructor(
    private readonly db: PGlite,
    readonly password: string,
    options: { directory?: string; activity?: PgliteActivity; onNotification?: (channel: string) => void } = {},
  ) {
    this.directory = options.directory
    this.activity = options.activity
    this.onNotification = options.onNotification
    this.server = net.createServer((socket) => {
      socket.setNoDelay(true)
      this.serve(socket)
    })
  }

  listen(host: string, port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(port, host, () => resolve((this.server.address() as net.AddressInfo).port))
    })
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
    while (this.running) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  /** Serves one client connection: a loopback socket, or the owning process's PortSocket. */
  serve(socket: Duplex): void {
    const connection = new Connection(socket, this)
    this.connections.add(connection)
    socket.on('data', (chunk: Buffer) => connection.receive(chunk))
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      connection.closed = true
      this.connections.delete(connection)
      this.queue = this.queue.filter((unit) => unit.connection !== connection)
      if (this.owner === connection) {
        this.owner = null
        this.queue.unshift(this.rollbackUnit())
        void this.drain()
      }
    })
  }

  acceptsPassword(given: Buffer): boolean {
    const expected = Buffer.from(this.password)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /** Answers a backup request (embedded-backup.ts makes the tarball), once the password is right. */
  backup(connection: Connection, password: Buffer): void {
    const { socket } = connection
    if (!this.acceptsPassword(password) || !this.directory) {
      socket.end(fatal('28P01', 'password authentication failed'))
      return
    }
    sendBackup(this.directory, socket, (task) => this.whenIdle(task)).catch((error: unknown) => {
      if (!socket.destroyed) socket.end(fatal('58000', `backup failed: ${error instanceof Error ? error.message : String(error)}`))
    })
  }

  notified(channel: string): void {
    this.onNotification?.(channel)
  }

  enqueue(unit: Unit): void {
    this.queue.push(unit)
    void this.drain()
  }

  /** Runs `task` between units, when no connection holds the session (never inside a client's transaction). */
  whenIdle<T>(task: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      this.enqueue({ connection: this.detachedConnection(), messages: [], task: () => task().then(resolve, reject) })
    })
  }

  /** A simple-protocol ROLLBACK (and the end of a COPY) for a connection that went away mid-exchange. */
  private rollbackUnit(): Unit {
    const text = 'ROLLBACK\0'
    const rollback = Buffer.alloc(5 + text.length)
    rollback.write('Q', 0)
    rollback.writeInt32BE(4 + text.length, 1)
    rollback.write(text, 5)
    return { connection: this.detachedConnection(), messages: [rollback] }
  }

  /** A connection with no client behind it (its answers go nowhere): for the server's own units. */
  private detachedConnection(): Connection {
    const connection = new Connection(new net.Socket(), this)
    connection.closed = true
    return connection
  }

  private next(): Unit | undefined {
    if (!this.owner) return this.queue.shift()
    const index = this.queue.findIndex((unit) => unit.connection === this.owner)
    return index === -1 ? undefined : this.queue.splice(index, 1)[0]
  }

  private async drain(): Promise<void> {
    if (this.running) return
    this.running = true
    try {
      for (let unit = this.next(); unit; unit = this.next()) {
        const { connection } = unit
        this.activity?.unitStarted()
        if (unit.task) {
          await unit.task().finally(() => this.activity?.unitEnded())
          continue
        }
        connection.sawReady = false
        // One write per unit rather than one per chunk PGlite emits (a syscall each: 0.7 s of this
        // thread's 2.3 s at 1 000 GETs/s).
        connection.socket.cork()
        await this.db
          .runExclusive(async () => {
            for (const batch of protocolBatches(unit.messages)) {
              if (batch === END_SESSION) {
                connection.sawReady = true
                connection.socket.end()
                continue
              }
              await this.db.execProtocolRawStream(batch, {
                onRawData: (data: Uint8Array) => {
                  connection.observeOutput(data)
                  if (!connection.closed && connection.socket.writable) connection.socket.write(Buffer.from(data))
                },
              })
            }
          })
          .finally(() => {
            connection.socket.uncork()
            this.activity?.unitEnded()
          })
        // In a transaction (T or E), or mid-exchange (no ReadyForQuery yet), this connection keeps
        // the session until it is done; one that left meanwhile is rolled back.
        const holds = connection.transactionStatus !== 'I' || !connection.sawReady
        this.owner = holds && !connection.closed ? connection : null
        if (holds && connection.closed) this.queue.unshift(this.rollbackUnit())
      }
    } finally {
      this.running = false
    }
  }
}
