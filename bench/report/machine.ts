// What the report header says about the machine: a latency figure means little without the CPU,
// its SIMD features (the int8 kernels pick AVX2 / AVX-512 VNNI / NEON from them), the core count
// the load generator and the service share, and the matcher backend the service actually chose.
import fs from 'node:fs'
import os from 'node:os'
import type { MachineInfo } from './result.js'

// The features that matter for the int8 dot-product kernels, in the order a reader scans them.
const SIMD_FEATURES = [
  'sse4_1',
  'sse4_2',
  'avx',
  'avx2',
  'fma',
  'avx_vnni',
  'avx512f',
  'avx512bw',
  'avx512vl',
  'avx512_vnni',
  'amx_int8',
  'asimd',
  'asimddp',
  'sve',
  'sve2',
  'i8mm',
  'simd128',
]

/** Parses /proc/cpuinfo text (x86 `flags`, ARM `Features`); exported for tests. */
export function parseCpuInfo(text: string): { model: string | null; physicalCores: number | null; simd: string[] } {
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim() ?? null
  const flags = new Set((field('flags') ?? field('Features') ?? '').split(/\s+/).filter(Boolean))
  // Physical cores = distinct (physical id, core id) pairs; VMs often report only `cpu cores`.
  const pairs = new Set<string>()
  for (const block of text.split(/\n\s*\n/)) {
    const physical = /^physical id\s*:\s*(\d+)/m.exec(block)?.[1]
    const core = /^core id\s*:\s*(\d+)/m.exec(block)?.[1]
    if (physical !== undefined && core !== undefined) pairs.add(`${physical}:${core}`)
  }
  const cpuCores = Number(field('cpu cores'))
  return {
    model: field('model name') ?? field('Hardware') ?? field('CPU part'),
    physicalCores: pairs.size > 0 ? pairs.size : Number.isInteger(cpuCores) && cpuCores > 0 ? cpuCores : null,
    simd: SIMD_FEATURES.filter((feature) => flags.has(feature)),
  }
}

export function machineInfo(matcher: MachineInfo['matcher']): MachineInfo {
  let parsed: ReturnType<typeof parseCpuInfo> = { model: null, physicalCores: null, simd: [] }
  try {
    parsed = parseCpuInfo(fs.readFileSync('/proc/cpuinfo', 'utf8'))
  } catch {
    // not Linux: os.cpus() still names the model; SIMD features stay unknown
  }
  const cpus = os.cpus()
  return {
    cpuModel: parsed.model ?? cpus[0]?.model?.trim() ?? 'unknown',
    physicalCores: parsed.physicalCores,
    logicalCpus: os.availableParallelism(),
    simd: parsed.simd,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    matcher,
  }
}
