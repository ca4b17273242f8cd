// Threads for an import's parsing, checking, sealing and encoding (import-prepare.ts), alive for
// one import: the main thread keeps cutting lines, searching for duplicates and writing, the
// threads do the JSON, the AES-GCM, the capture maths and the COPY encoding. Small imports never start them (a pool costs ~50 ms to start).
import type { LineParser, PrepareResult, PrepareTask } from './import-prepare.js'
import { createThreadPool } from '../thread-pool.js'

export interface ImportPool {
  prepare(task: PrepareTask): Promise<PrepareResult>
  readonly threads: number
  close(): Promise<void>
}

/**
 * The line check an import uses, on this thread and in its threads. The check is the wire
 * schema's (a layer above the domain), so the caller hands it in: `parse` itself, and the thread
 * module (`module` beside `base`, an import.meta.url) whose default export runs prepareImportLines with it.
 */
export interface ImportLines {
  parse: LineParser
  thread: { base: string; module: string }
}

export function createImportPool(threads: number, lines: ImportLines): ImportPool {
  const piscina = createThreadPool<PrepareTask, PrepareResult>(lines.thread.base, lines.thread.module, threads)
  return {
    prepare: (task) => piscina.run(task),
    threads,
    close: () => piscina.destroy(),
  }
}
