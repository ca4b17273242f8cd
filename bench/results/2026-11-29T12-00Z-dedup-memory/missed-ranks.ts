// Which planted pairs the cell search misses at 1M members, and how many probes would find them:
// the same centroids as the bench's run (seed 52, split), every planted member's and its source's
// palms ranked against all cells; a pair is found when, for some palm pair of the two members at or
// above the threshold, one palm's two stored cells are among the other's first `probes`.
//   npx tsx bench/results/2026-11-29T12-00Z-dedup-memory/missed-ranks.ts <the bench's --register-cache file> <members>
import { readFileSync } from 'node:fs'
import { createMatcher } from '@palmvein/matcher'
import { scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import { defaultCells, trainCentroids } from '../../../src/domain/dedup/dedup-cells.js'
import { packPalms } from '../../../src/domain/dedup/dedup-packed-palms.js'
import { createPlantedRegister } from '../../dedup-register.js'

const [file, membersText] = process.argv.slice(2)
const members = Number(membersText)
const dimension = 256, seed = 52, threshold = 0.8, probes = 32, ranked = 256
const duplicates = Math.max(10, Math.round(members * 0.01))
const lookAlikes = Math.max(10, Math.round(members * 0.005))
const planted = createPlantedRegister({ seed, dimension, base: members - duplicates - lookAlikes, duplicates, lookAlikes, threshold })
const bytes = readFileSync(file)
const vectors = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
const palms = packPalms({ count: members * 2, dimension, owner: (palm) => palm >> 1, vector: (palm) => vectors.subarray(palm * dimension, (palm + 1) * dimension) })
const matcher = await createMatcher({ dimension, threads: 2 })
const started = performance.now()
const centroids = await trainCentroids(matcher, palms, defaultCells(members * 2, probes), seed, true)
const cells = centroids.length / dimension
console.log(`${cells} cells in ${((performance.now() - started) / 1000).toFixed(1)} s`)
const gallery = matcher.createGallery()
for (let cell = 0; cell < cells; cell++) gallery.upsert(`c${cell}`, centroids.subarray(cell * dimension, (cell + 1) * dimension))
const cosine = (x: number, y: number) => {
  let dot = 0, xx = 0, yy = 0
  for (let c = 0; c < dimension; c++) {
    const a = vectors[x * dimension + c], b = vectors[y * dimension + c]
    dot += a * b; xx += a * a; yy += b * b
  }
  return dot / Math.sqrt(xx * yy)
}
// The palm pairs at or above the threshold of each planted pair.
const pairs: Array<{ member: number; from: number; combos: Array<[number, number, number]> }> = []
for (let member = 0; member < members; member++) {
  const from = planted.source(member)
  if (from === null) continue
  const combos: Array<[number, number, number]> = []
  for (const hand of [0, 1]) for (const other of [0, 1]) {
    const score = cosine(2 * member + hand, 2 * from + other)
    if (score >= threshold + 1e-9) combos.push([2 * member + hand, 2 * from + other, score])
  }
  if (combos.length) pairs.push({ member, from, combos })
}
const wanted = [...new Set(pairs.flatMap((pair) => pair.combos.flatMap(([x, y]) => [x, y])))]
const rank = new Map<number, Int32Array>()
for (let first = 0; first < wanted.length; first += 2048) {
  const block = wanted.slice(first, first + 2048)
  const out = new Int8Array(block.length * dimension), norms = new Uint32Array(block.length)
  palms.gather(block, out, norms)
  const top = await scanRowRangeTopK(gallery, 0, cells, out, norms, ranked, 0)
  block.forEach((palm, index) => rank.set(palm, top.rows.slice(index * ranked, (index + 1) * ranked)))
}
// Probes needed for x to find y (y stored in its two nearest cells): 1 + the first rank in x's list of either.
const needed = (x: number, y: number) => {
  const list = rank.get(x)!, stored = rank.get(y)!.slice(0, 2)
  const at = list.findIndex((cell) => cell === stored[0] || cell === stored[1])
  return at < 0 ? Infinity : at + 1
}
let found = 0
const missed: Array<{ member: number; from: number; needed: number; score: number }> = []
for (const pair of pairs) {
  let best = Infinity, score = 0
  for (const [x, y, s] of pair.combos) {
    const n = Math.min(needed(x, y), needed(y, x))
    if (n < best) { best = n; score = s }
  }
  if (best <= probes) found++
  else missed.push({ member: pair.member, from: pair.from, needed: best, score: Number(score.toFixed(4)) })
}
console.log(JSON.stringify({ members, cells, above: pairs.length, found, missed }))
await matcher.close()
