// Prints the matcher benchmark table and writes packages/matcher/bench/results/matcher-<date>.json.
import fs from 'node:fs'
import path from 'node:path'

export interface ResultRow {
  rows: number
  dimension: number
  /** 'floor', 'native:avx2', 'native:two_stage', 'wasm', 'js', 'usearch', 'faiss:sq8', 'faiss:binary', 'api:native' ... */
  engine: string
  /** 1, 4 or 16 probes per scan. */
  batch: number
  threads: number
  medianMs: number
  p95Ms: number
  perProbeMs: number
  samples: number
  /** medianMs of the one-probe scan / bandwidth floor on the same number of threads. */
  vsFloor?: number
  /** usearch exactSearch time / ours (same thread count, one probe): > 1 means faster. */
  vsUsearch?: number
  /** FAISS time / ours (same threads and batch; its exact int8 scan for exact engines, its
   *  binary scan for two-stage ones): > 1 means faster. */
  vsFaiss?: number
  /** js reference time / ours (same batch). */
  vsJs?: number
  /** this / best native single-thread (same batch). */
  vsNative?: number
  /** batch time / one-probe time of the same engine. */
  vsSingle?: number
}

const fixed = (value: number | undefined, digits = 2) => (value === undefined ? '' : value.toFixed(digits))

export function printTable(rows: readonly ResultRow[]): void {
  const header = ['rows', 'd', 'engine', 'thr', 'batch', 'median ms', 'p95 ms', 'ms/probe', '/floor', 'x usearch', 'x faiss', 'x js', '/native', 'batch/1']
  const lines = rows.map((row) => [
    String(row.rows),
    String(row.dimension),
    row.engine,
    String(row.threads),
    String(row.batch),
    fixed(row.medianMs, 3),
    fixed(row.p95Ms, 3),
    fixed(row.perProbeMs, 3),
    fixed(row.vsFloor),
    fixed(row.vsUsearch),
    fixed(row.vsFaiss),
    fixed(row.vsJs, 1),
    fixed(row.vsNative),
    fixed(row.vsSingle),
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)))
  const format = (cells: string[]) => cells.map((cell, column) => (column === 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')
  console.log(format(header))
  console.log(widths.map((width) => '-'.repeat(width)).join('  '))
  for (const line of lines) console.log(format(line))
}

export function writeResults(directory: string, document: object): string {
  fs.mkdirSync(directory, { recursive: true })
  const stamp = new Date().toISOString().replace(/[:]/g, '-').replace(/\..+$/, '')
  const file = path.join(directory, `matcher-${stamp}.json`)
  fs.writeFileSync(file, JSON.stringify(document, null, 2) + '\n')
  return file
}
