// Starts and stops the embedded database's thread (pglite-worker.ts).
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Duplex } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { MessageChannel, Worker } from 'node:worker_threads'
import type { PgliteThreadRequest, PgliteWorkerData, PgliteWorkerMessage } from './pglite-worker.js'
import { PortSocket } from './port-socket.js'

// From src/ (vitest, tsx) the worker is a .ts source and starts through tsx; from dist/ it is .js.
const runsFromSource = import.meta.url.endsWith('.ts')
const workerUrl = new URL(runsFromSource ? './pglite-worker.ts' : './pglite-worker.js', import.meta.url)
const initdbUrl = new URL(runsFromSource ? './pglite-initdb.ts' : './pglite-initdb.js', import.meta.url)
const STOP_TIMEOUT_MS = 30_000
/**
 * The thread's young generation: V8 makes 6 MB two 2 MB semi-spaces. With the default 16 MB
 * semi-spaces a scavenge here took 2.5-5 ms every ~400 ms at 1 000 GETs/s, and every statement
 * that reached the thread meanwhile waited; at 2 MB they take 0.7-0.9 ms, more often. GET member
 * p95 at 20 000 members, 9 phases of 10 s per setting, alternating: 4.24 -> 3.66 ms.
 */
const YOUNG_GENERATION_MB = 6

function spawn(data: PgliteWorkerData): Worker {
  const resourceLimits = { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB }
  return runsFromSource
    ? new Worker(new URL('./ts-worker-bootstrap.mjs', import.meta.url), { workerData: { ...data, entry: workerUrl.href }, resourceLimits })
    : new Worker(workerUrl, { workerData: data, resourceLimits })
}

/** A new data directory's database is created (initdb) by a process of its own (pglite-initdb.ts). */
async function initialiseDataDirectory(directory: string): Promise<void> {
  if (existsSync(path.join(directory, 'PG_VERSION'))) return
  const entry = fileURLToPath(initdbUrl)
  const args = runsFromSource ? ['--import', 'tsx', entry, directory] : [entry, directory]
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, args, (error, _stdout, stderr) => {
      if (error) reject(new Error(`the embedded database did not open (creating it): ${stderr.trim() || error.message}`))
      else resolve()
    })
  })
}

export async function startPgliteWorker(data: PgliteWorkerData): Promise<{ worker: Worker; port: number }> {
  await initialiseDataDirectory(data.directory)
  const worker = spawn(data)
  // After the start, a failure shows as refused connections (answered like any database outage);
  // the listener keeps it from being thrown on this thread.
  worker.on('error', () => {})
  const port = await new Promise<number>((resolve, reject) => {
    const exited = (code: number) => reject(new Error(`the embedded database's thread exited (code ${code}) before it was ready`))
    worker.once('exit', exited)
    worker.once('error', (error) => reject(new Error(`the embedded database did not open: ${error.message}`)))
    worker.once('message', (message: PgliteWorkerMessage) => {
      worker.off('exit', exited)
      if (message.kind === 'listening') resolve(message.port)
      else reject(new Error(`the embedded database did not open: ${message.kind === 'failed' ? message.message : message.kind}`))
    })
  }).catch(async (error: unknown) => {
    await worker.terminate()
    throw error
  })
  // The thread does not keep the process alive on its own: the owner closes it.
  worker.unref()
  return { worker, port }
}

/** A new connection to the thread's server over a MessageChannel (postgres.js's `socket` option). */
export function connectToPgliteWorker(worker: Worker): Duplex {
  const { port1, port2 } = new MessageChannel()
  const request: PgliteThreadRequest = { kind: 'connect', port: port2 }
  worker.postMessage(request, [port2])
  return new PortSocket(port1)
}

/** A full collection in the thread (idle-memory-release.ts); resolves when it is done or the thread is gone. */
export function releasePgliteWorkerGarbage(worker: Worker): Promise<void> {
  const { port1, port2 } = new MessageChannel()
  const request: PgliteThreadRequest = { kind: 'release', port: port2 }
  return new Promise<void>((resolve) => {
    const done = () => {
      worker.off('exit', done)
      port1.close()
      resolve()
    }
    port1.once('message', done)
    worker.once('exit', done)
    worker.postMessage(request, [port2])
  })
}

/** Closes the server and PGlite's files in the thread, then ends the thread. */
export async function stopPgliteWorker(worker: Worker): Promise<void> {
  // Held open until the files are closed, or a command that ends here would exit mid-close.
  worker.ref()
  const closed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the embedded database did not close within ${STOP_TIMEOUT_MS / 1000} s`)), STOP_TIMEOUT_MS)
    worker.once('message', (message: PgliteWorkerMessage) => {
      clearTimeout(timer)
      if (message.kind === 'closed') resolve()
      else reject(new Error(`the embedded database did not close cleanly: ${message.kind === 'failed' ? message.message : message.kind}`))
    })
    worker.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
  })
  const close: PgliteThreadRequest = 'close'
  worker.postMessage(close)
  try {
    await closed
  } finally {
    await worker.terminate()
  }
}
