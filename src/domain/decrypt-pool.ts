// Threads for a boot load's AES-GCM (reference-decrypt-worker.ts), alive for one load: a restart
// decrypts millions of references, then the threads go (their memory with them).
import { packRows, type DecryptResult, type DecryptRow, type DecryptTask } from './reference-decrypt-worker.js'
import { createThreadPool } from './thread-pool.js'

export interface DecryptPool {
  /** The rows' vectors in order (rows.length x dimension) and the rows that failed, split across the threads. */
  decrypt(environmentKey: Uint8Array, dimension: number, rows: readonly DecryptRow[]): Promise<DecryptResult>
  close(): Promise<void>
}

export function createDecryptPool(threads: number): DecryptPool {
  const piscina = createThreadPool<DecryptTask, DecryptResult>('reference-decrypt-worker', threads)
  return {
    async decrypt(environmentKey, dimension, rows) {
      const slice = Math.ceil(rows.length / threads)
      const starts = Array.from({ length: Math.ceil(rows.length / slice) }, (_, index) => index * slice)
      const parts = await Promise.all(starts.map((start) => piscina.run(packRows(environmentKey, dimension, rows.slice(start, start + slice)))))
      const vectors = new Int8Array(rows.length * dimension)
      const failures: DecryptResult['failures'] = []
      parts.forEach((part, index) => {
        vectors.set(part.vectors, starts[index] * dimension)
        for (const failure of part.failures) failures.push({ index: failure.index + starts[index], reason: failure.reason })
      })
      return { vectors, failures }
    },
    close: () => piscina.destroy(),
  }
}
