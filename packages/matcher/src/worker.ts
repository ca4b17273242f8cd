// A piscina worker: builds the scan kernel the main thread chose, over the same shared memory,
// then runs scan tasks. Plain .js under dist/; under vitest/tsx it is loaded through tsx.
import { workerData } from 'node:worker_threads'
import { loadNativeAddon, type BackendName } from './backend.js'
import { type CellsTask, runCellsTask } from './cells-task.js'
import { type GatedJoinTask, type GatedPairs, runGatedJoinTask } from './gated-join-task.js'
import { createKernel } from './kernel.js'
import { type CodesTask, writeRotatedCodes } from './rotated-codes.js'
import { runScanTask, type ScanTask } from './scan-task.js'
import { adoptSlabs, openSharedMemory } from './shared-memory.js'
import type { TopK } from './top-k.js'

export interface WorkerSetup {
  memory: WebAssembly.Memory | SharedArrayBuffer[]
  backend: BackendName
  wasmModule?: WebAssembly.Module
  isa?: string
}

const setup = workerData as WorkerSetup

function loadAddon() {
  if (setup.backend !== 'native') return undefined
  const loaded = loadNativeAddon()
  if (!loaded.ok) throw new Error(loaded.reason)
  if (setup.isa) loaded.value.setIsa(setup.isa)
  return loaded.value
}

const memory = openSharedMemory(setup.memory)
const kernel = createKernel(setup.backend, memory, { addon: loadAddon(), wasmModule: setup.wasmModule })

export default function scan(task: ScanTask): TopK {
  adoptSlabs(memory, task.slabs)
  return runScanTask(kernel, task)
}

export function scanCells(task: CellsTask): TopK {
  adoptSlabs(memory, task.slabs)
  return runCellsTask(kernel, task)
}

export function gatedJoin(task: GatedJoinTask): GatedPairs {
  adoptSlabs(memory, task.slabs)
  return runGatedJoinTask(kernel, task)
}

export function rotatedCodes(task: CodesTask): void {
  writeRotatedCodes(task)
}
