// The memory-bandwidth floor on several threads: the gallery's bytes split in equal shares, one
// per worker, all read at once (streamRead); a run lasts until the slowest share is read. The
// public API's searches on that many threads are judged against it (a search cannot beat reading
// its gallery once with the same threads).
import { Piscina } from 'piscina'
import type { BackendName } from '../src/backend.js'
import type { Segment } from '../src/kernel.js'
import type { SharedMemory } from '../src/shared-memory.js'

const WORKER_URL = new URL('./matcher-floor-worker.ts', import.meta.url).href

export interface ParallelFloor {
  /** One read of every share at once. */
  run(): Promise<void>
  close(): Promise<void>
}

/** Splits `[offset, length]` ranges into `parts` lists of nearly equal total length. */
export function splitRanges(ranges: readonly [number, number][], parts: number): [number, number][][] {
  const total = ranges.reduce((sum, [, length]) => sum + length, 0)
  const share = Math.ceil(total / parts / 64) * 64
  const shares: [number, number][][] = Array.from({ length: parts }, () => [])
  let part = 0
  let room = share
  for (let [offset, length] of ranges) {
    while (length > 0) {
      const taken = Math.min(length, room)
      shares[part].push([offset, taken])
      offset += taken
      length -= taken
      room -= taken
      if (room === 0 && part < parts - 1) {
        part++
        room = share
      }
    }
  }
  return shares
}

export async function createParallelFloor(options: {
  memory: SharedMemory
  segments: readonly Segment[]
  strideInBytes: number
  threads: number
  backend: BackendName
  wasmModule?: WebAssembly.Module
}): Promise<ParallelFloor> {
  const ranges = options.segments.map((segment): [number, number] => [segment.rowsOffset, segment.rowEnd * options.strideInBytes])
  const shares = splitRanges(ranges, options.threads)
  // One task per share at once on as many workers: each worker takes one.
  const pool = new Piscina<{ ranges: [number, number][]; slabs?: SharedArrayBuffer[] }, number>({
    filename: WORKER_URL,
    minThreads: shares.length,
    maxThreads: shares.length,
    workerData: { memory: options.memory.handle, backend: options.backend, wasmModule: options.wasmModule },
    execArgv: ['--import', 'tsx'],
  })
  const readAll = () => Promise.all(shares.map((ranges) => pool.run({ ranges, slabs: options.memory.slabs })))
  await readAll() // the workers are up and have touched their shares once
  return {
    run: async () => {
      await readAll()
    },
    close: () => pool.destroy(),
  }
}
