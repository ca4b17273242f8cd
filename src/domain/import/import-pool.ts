// Threads for an import's parsing, checking, sealing and encoding (import-prepare.ts), alive for
// one import: the main thread keeps cutting lines, searching for duplicates and writing, the
// threads do the JSON, the AES-GCM, the capture maths and the COPY encoding. Small imports never start them (a pool costs ~50 ms to start).
import type { PrepareResult, PrepareTask } from './import-prepare.js'
import { createThreadPool } from '../thread-pool.js'

export interface ImportPool {
  prepare(task: PrepareTask): Promise<PrepareResult>
  readonly threads: number
  close(): Promise<void>
}

export function createImportPool(threads: number): ImportPool {
  const piscina = createThreadPool<PrepareTask, PrepareResult>(import.meta.url, 'import-prepare', threads)
  return {
    prepare: (task) => piscina.run(task),
    threads,
    close: () => piscina.destroy(),
  }
}
