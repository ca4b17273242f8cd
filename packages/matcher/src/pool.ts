// The piscina pool that scans gallery slices. Workers get the shared memory (and the compiled
// WASM module) once, in workerData; a task carries only segment offsets and the probes.
import { Piscina } from 'piscina'
import type { BackendName } from './backend.js'
import type { CellsTask } from './cells-task.js'
import type { GatedJoinTask, GatedPairs } from './gated-join-task.js'
import type { CodesTask } from './rotated-codes.js'
import type { ScanTask } from './scan-task.js'
import type { SharedMemory } from './shared-memory.js'
import type { TopK } from './top-k.js'
import type { WorkerSetup } from './worker.js'

export interface ScanPool {
  readonly threads: number
  run(task: ScanTask): Promise<TopK>
  /** Runs the worker's `scanCells` (cells-task.ts). */
  runCells(task: CellsTask): Promise<TopK>
  /** Runs the worker's `gatedJoin` (gated-join-task.ts). */
  runGatedJoin(task: GatedJoinTask): Promise<GatedPairs>
  /** Runs the worker's `rotatedCodes` (rotated-codes.ts): writes into the task's shared `out`. */
  runCodes(task: CodesTask): Promise<void>
  close(): Promise<void>
}

export interface ScanPoolOptions {
  threads: number
  memory: SharedMemory
  backend: BackendName
  wasmModule?: WebAssembly.Module
  isa?: string
}

// Under vitest/tsx this module is the .ts source and so is the worker; Node 20 cannot run
// TypeScript itself, so those workers load tsx first. From dist/ both are plain .js.
const ownUrl = import.meta.url
const runsFromSource = ownUrl.endsWith('.ts')
const workerUrl = new URL(runsFromSource ? './worker.ts' : './worker.js', ownUrl)

export function createScanPool(options: ScanPoolOptions): ScanPool {
  const workerData: WorkerSetup = {
    memory: options.memory.handle,
    backend: options.backend,
    wasmModule: options.wasmModule,
    isa: options.isa,
  }
  const piscina = new Piscina<ScanTask | CellsTask | GatedJoinTask | CodesTask, TopK | GatedPairs | undefined>({
    filename: workerUrl.href,
    minThreads: options.threads,
    maxThreads: options.threads,
    // Scans arrive in bursts; keep the workers (and their compiled kernels) warm.
    idleTimeout: 60_000,
    workerData,
    ...(runsFromSource ? { execArgv: ['--import', 'tsx'] } : {}),
  })
  return {
    threads: options.threads,
    run: (task) => piscina.run(task) as Promise<TopK>,
    runCells: (task) => piscina.run(task, { name: 'scanCells' }) as Promise<TopK>,
    runGatedJoin: (task) => piscina.run(task, { name: 'gatedJoin' }) as Promise<GatedPairs>,
    runCodes: async (task) => {
      await piscina.run(task, { name: 'rotatedCodes' })
    },
    close: () => piscina.destroy(),
  }
}
