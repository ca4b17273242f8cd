// A piscina worker of the multi-thread bandwidth floor (bench/matcher-floor-threads.ts): reads the
// byte ranges of a task from the gallery's shared memory with the kernel's streamRead.
import { workerData } from 'node:worker_threads'
import { loadNativeAddon, type BackendName } from '../src/backend.js'
import { createKernel } from '../src/kernel.js'
import { adoptSlabs, openSharedMemory, type SharedMemory } from '../src/shared-memory.js'

const setup = workerData as { memory: SharedMemory['handle']; backend: BackendName; wasmModule?: WebAssembly.Module }
const addon = setup.backend === 'native' ? loadNativeAddon() : undefined
if (addon && !addon.ok) throw new Error(addon.reason)
const memory = openSharedMemory(setup.memory)
const kernel = createKernel(setup.backend, memory, { addon: addon?.ok ? addon.value : undefined, wasmModule: setup.wasmModule })

export default function read(task: { ranges: [number, number][]; slabs?: SharedArrayBuffer[] }): number {
  adoptSlabs(memory, task.slabs)
  let checksum = 0
  for (const [offset, length] of task.ranges) checksum ^= kernel.streamRead(offset, length)
  return checksum
}
