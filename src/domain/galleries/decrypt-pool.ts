// Threads for a boot load's AES-GCM (reference-decrypt-worker.ts) when node:crypto does it, alive
// for one load: a restart decrypts millions of references, then the threads go (their memory with them).
import { sliceTask, type DecryptResult, type DecryptTask } from './reference-decrypt-worker.js'
import { createThreadPool } from '../thread-pool.js'

export interface DecryptPool {
  /** The task's vectors in order (rows x dimension) and the rows that failed, split across the threads. */
  decrypt(task: DecryptTask): Promise<DecryptResult>
  close(): Promise<void>
}

export function createDecryptPool(threads: number): DecryptPool {
  const piscina = createThreadPool<DecryptTask, DecryptResult>(import.meta.url, 'reference-decrypt-worker', threads)
  return {
    async decrypt(task) {
      const rows = task.keyEnds.length
      const slice = Math.max(1, Math.ceil(rows / threads))
      const starts = Array.from({ length: Math.ceil(rows / slice) }, (_, index) => index * slice)
      const parts = await Promise.all(starts.map((start) => piscina.run(sliceTask(task, start, Math.min(rows, start + slice)))))
      const vectors = new Int8Array(rows * task.dimension)
      const failures: DecryptResult['failures'] = []
      parts.forEach((part, index) => {
        vectors.set(part.vectors, starts[index] * task.dimension)
        for (const failure of part.failures) failures.push({ index: failure.index + starts[index], reason: failure.reason })
      })
      return { vectors, failures }
    },
    close: () => piscina.destroy(),
  }
}
