// The embedded database's own thread: PGlite and its loopback server (pglite-server.ts) run here,
// so SQL executes beside the service's event loop, not on it: a request no longer waits while
// another request's statement, an audit append or a gallery load runs in PGlite.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { fullCollection } from '../../runtime/full-collection.js'
import { PGlite } from '@electric-sql/pglite'
import { analyzeGrownTables, ANALYZE_EVERY_MS } from './pglite-analyze.js'
import { ACCESS_CHANNEL, PgliteActivity } from './pglite-activity.js'
import { PgliteServer } from './pglite-server.js'
import { PortSocket } from './port-socket.js'

export interface PgliteWorkerData {
  directory: string
  host: string
  password: string
  /** PostgreSQL shared_buffers, e.g. '16MB'. */
  sharedBuffers: string
  /** pglite-activity.ts: the unit running now (the health check) and access changes (the key cache). */
  activity: SharedArrayBuffer
}

/** What the owning thread sends: a connection's port, or "close". */
export type PgliteThreadRequest = { kind: 'connect'; port: MessagePort } | { kind: 'release'; port: MessagePort } | 'close'

export type PgliteWorkerMessage = { kind: 'listening'; port: number } | { kind: 'failed'; message: string } | { kind: 'closed' }

const { directory, host, password, sharedBuffers, activity } = workerData as PgliteWorkerData
const post = (message: PgliteWorkerMessage) => parentPort!.postMessage(message)

/**
 * PGlite runs one backend, whatever max_connections says; PostgreSQL's default of 100 sizes its
 * shared lock table, process array and I/O handles for a hundred (2 MB of shared memory, 4-5 MiB
 * of an idle service's RSS). Five keeps superuser_reserved_connections (3) below it; 128 locks a
 * transaction keep 640 slots, against the ~90 tables and indexes one transaction could lock.
 */
const ONE_BACKEND = ['-c', 'max_connections=5', '-c', 'max_locks_per_transaction=128']

/** Opens PGlite and serves it until "close". */
async function serve(): Promise<void> {
  const db = await PGlite.create(directory, { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`, ...ONE_BACKEND] })
  // Tables that grew while no service ran (an import into the data directory) get their
  // statistics before the first client, not in a stall under its traffic a minute later.
  // Statistics only make plans better: a failure here must not keep the database closed.
  await analyzeGrownTables(db).catch(() => {})
  // The session hears its own NOTIFYs: in clients' units through the server (their answers are
  // streamed raw), in this thread's own statements through PGlite.
  const shown = new PgliteActivity(activity)
  await db.listen(ACCESS_CHANNEL, () => shown.accessChanged())
  const onNotification = (channel: string) => {
    if (channel === ACCESS_CHANNEL) shown.accessChanged()
  }
  // Connections are multiplexed over PGlite's single session; keep transactions short.
  const server = new PgliteServer(db, password, { directory, activity: shown, onNotification })
  const port = await server.listen(host)
  // Statistics as autoanalyze would keep them (see pglite-analyze.ts), between clients' units.
  const analyze = setInterval(() => {
    void analyzeGrownTables(db, (task) => server.whenIdle(task)).catch(() => {})
  }, ANALYZE_EVERY_MS)
  analyze.unref()
  parentPort!.on('message', (message: PgliteThreadRequest) => {
    // A connection of the owning process, over a MessageChannel rather than loopback TCP.
    if (message !== 'close' && message.kind === 'connect') return server.serve(new PortSocket(message.port))
    // The owner found the service quiet: this isolate's garbage (the boot's statements, PGlite's
    // WebAssembly bytes read at its start) goes too, or it waits for a collection a quiet thread never runs.
    if (message !== 'close') {
      fullCollection()
      message.port.postMessage('released')
      return message.port.close()
    }
    // "close": stop serving, then close the files.
    clearInterval(analyze)
    void server
      .close()
      .then(() => db.close())
      .then(
        () => post({ kind: 'closed' }),
        (error: unknown) => post({ kind: 'failed', message: String(error) }),
      )
  })
  post({ kind: 'listening', port })
}

try {
  await serve()
} catch (error) {
  post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) })
}
