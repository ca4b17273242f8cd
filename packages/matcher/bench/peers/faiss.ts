// FAISS as a peer in `npm run bench:matcher`: a Python virtualenv with a pinned faiss-cpu (made
// once, cached), and one run of bench/peers/faiss_peer.py per gallery over the same rows and
// probes we scan. Where Python or PyPI is missing, the benchmark says so instead of failing.
//
//   PALMVEIN_BENCH_FAISS=0      skip FAISS
//   PALMVEIN_BENCH_PYTHON       a Python that can `import faiss, numpy` (no virtualenv is made)
//   PALMVEIN_BENCH_CACHE        where the virtualenv lives, default ~/.cache/palmvein-bench
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const FAISS_VERSION = '1.15.1'
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'faiss_peer.py')

export interface FaissTiming {
  /** 'sq8': exact int8 scan; 'binary': Hamming scan of the sign bits. */
  index: 'sq8' | 'binary'
  batch: number
  threads: number
  medianMs: number
  p95Ms: number
  samples: number
}

export type FaissMeasurement =
  | { available: true; version: string; python: string; buildSeconds: number; timings: FaissTiming[]; top1: { sq8: number[]; binary: number[] } }
  | { available: false; reason: string }

type PythonLookup = { ok: true; python: string } | { ok: false; reason: string }

const importsFaiss = (python: string) => spawnSync(python, ['-c', 'import faiss, numpy'], { encoding: 'utf8' }).status === 0
const lastLines = (text: string | null | undefined) => (text ?? '').trim().split('\n').slice(-3).join(' / ')

const lookups = new Map<string, PythonLookup>()

/** A Python with faiss: PALMVEIN_BENCH_PYTHON, else the cached virtualenv (made on first use).
 *  Looked up once per setting of the variables above. */
export function faissPython(): PythonLookup {
  const key = ['PALMVEIN_BENCH_FAISS', 'PALMVEIN_BENCH_PYTHON', 'PALMVEIN_BENCH_CACHE'].map((name) => process.env[name] ?? '').join('\0')
  let lookup = lookups.get(key)
  if (!lookup) lookups.set(key, (lookup = findOrMakePython()))
  return lookup
}

function findOrMakePython(): PythonLookup {
  if (process.env.PALMVEIN_BENCH_FAISS === '0') return { ok: false, reason: 'PALMVEIN_BENCH_FAISS=0' }
  const given = process.env.PALMVEIN_BENCH_PYTHON
  if (given) return importsFaiss(given) ? { ok: true, python: given } : { ok: false, reason: `PALMVEIN_BENCH_PYTHON=${given} cannot import faiss and numpy` }
  const cache = process.env.PALMVEIN_BENCH_CACHE ?? path.join(os.homedir(), '.cache', 'palmvein-bench')
  const venv = path.join(cache, `faiss-${FAISS_VERSION}`)
  const python = path.join(venv, 'bin', 'python')
  if (fs.existsSync(python) && importsFaiss(python)) return { ok: true, python }
  if (spawnSync('python3', ['--version']).status !== 0) return { ok: false, reason: 'python3 not found' }
  // Made in a staging directory and renamed, so an interrupted install never looks complete.
  const staging = `${venv}.staging-${process.pid}`
  fs.rmSync(staging, { recursive: true, force: true })
  fs.mkdirSync(cache, { recursive: true })
  console.log(`[bench] FAISS: installing faiss-cpu==${FAISS_VERSION} and numpy into ${venv} (once)`)
  const made = spawnSync('python3', ['-m', 'venv', staging], { encoding: 'utf8' })
  if (made.status !== 0) return { ok: false, reason: `python3 -m venv failed: ${lastLines(made.stderr)}` }
  const pip = spawnSync(path.join(staging, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', `faiss-cpu==${FAISS_VERSION}`, 'numpy'], {
    encoding: 'utf8',
  })
  if (pip.status !== 0) {
    fs.rmSync(staging, { recursive: true, force: true })
    return { ok: false, reason: `pip install faiss-cpu==${FAISS_VERSION} failed: ${lastLines(pip.stderr)}` }
  }
  fs.rmSync(venv, { recursive: true, force: true })
  fs.renameSync(staging, venv)
  // A virtualenv's scripts name its directory: the renamed one runs through its python only.
  return importsFaiss(python) ? { ok: true, python } : { ok: false, reason: `the virtualenv at ${venv} cannot import faiss` }
}

/** Node's single write stops at 2 GiB; a 10M x 256 gallery is 2.56 GB: written in 1 GiB pieces. */
function writeLargeFile(file: string, bytes: Int8Array): void {
  const PIECE = 2 ** 30
  const descriptor = fs.openSync(file, 'w')
  try {
    for (let offset = 0; offset < bytes.byteLength; offset += PIECE) {
      const piece = bytes.subarray(offset, Math.min(offset + PIECE, bytes.byteLength))
      for (let written = 0; written < piece.byteLength; ) written += fs.writeSync(descriptor, piece, written)
    }
  } finally {
    fs.closeSync(descriptor)
  }
}

/** Times FAISS's exact int8 scan and its binary scan over `rows` for the first 1 and 16 `probes`. */
export function measureFaiss(options: {
  rows: Int8Array
  probes: Int8Array
  dimension: number
  k: number
  threads: readonly number[]
  budgetMs: number
  maxIterations: number
}): FaissMeasurement {
  const lookup = faissPython()
  if (!lookup.ok) return { available: false, reason: lookup.reason }
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-faiss-'))
  try {
    const rowsFile = path.join(directory, 'rows.i8')
    const probesFile = path.join(directory, 'probes.i8')
    writeLargeFile(rowsFile, options.rows)
    writeLargeFile(probesFile, options.probes)
    const run = spawnSync(
      lookup.python,
      [
        SCRIPT,
        '--rows',
        rowsFile,
        '--probes',
        probesFile,
        '--dimension',
        String(options.dimension),
        '--k',
        String(options.k),
        '--threads',
        options.threads.join(','),
        '--budget-ms',
        String(options.budgetMs),
        '--max-iterations',
        String(options.maxIterations),
      ],
      { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    )
    if (run.status !== 0) return { available: false, reason: `faiss_peer.py exited with ${run.status ?? run.signal}: ${lastLines(run.stderr)}` }
    const document = JSON.parse(run.stdout) as { version: string; buildSeconds: number; timings: FaissTiming[]; top1: { sq8: number[]; binary: number[] } }
    return { available: true, python: lookup.python, ...document }
  } finally {
    fs.rmSync(directory, { recursive: true, force: true })
  }
}
