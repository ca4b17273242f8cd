#!/usr/bin/env node
// Import lines for the duplicate-search benchmark (bench/results/2026-11-28-import-search): members
// to import, without --allow-duplicates, into an environment seed.mjs filled from the same
// synthetic population (its --seed, --members and --probes). In turn:
//   0  a new person (another population, never enrolled);
//   1  a member already stored enrolled again (session 1 captures of an identity < --members);
//   2  a look-alike: left palm a stored member's mixed with noise to a cosine within ±0.02 of
//      --threshold (both captures alike), right palm a new person's;
//   3  a line earlier in this file enrolled again (session 2), or a new person before there is one;
//   4  a new person.
// Every line names its member_id (derived from --tag and its number), so two files with other tags
// do not collide.
//   node bench/service/import-candidates.mjs --members 100000 --lines 20000 --out file.ndjson
import fs from 'node:fs'
import { createHash } from 'node:crypto'
import { parseArgs } from 'node:util'

const matcher = await import('@palmvein/matcher')
const { createRandom, hashSeed } = await import('@palmvein/matcher/random')

const { values } = parseArgs({
  options: {
    members: { type: 'string' },
    seed: { type: 'string', default: '42' },
    probes: { type: 'string', default: '2' },
    lines: { type: 'string' },
    threshold: { type: 'string', default: '0.8' },
    tag: { type: 'string', default: 'a' },
    out: { type: 'string' },
  },
  strict: true,
})
const members = Number(values.members)
const count = Number(values.lines)
const seed = Number(values.seed)
const threshold = Number(values.threshold)
if (!Number.isInteger(members) || members < 1 || !Number.isInteger(count) || count < 1 || !values.out) {
  console.error('usage: import-candidates.mjs --members <seeded> --lines <n> --out <file> [--seed 42] [--probes 2] [--threshold 0.8] [--tag a]')
  process.exit(2)
}
const dimension = 256
// The seeded population exactly as seed.mjs builds it.
const spares = Math.ceil(members * 0.15) + 16
const seeded = matcher.createSyntheticPopulation({ seed, dimension, identities: members + spares + Math.ceil(Number(values.probes) / 2) })
const strangers = matcher.createSyntheticPopulation({ seed: seed + 1000, dimension, identities: count })
const settings = { extractorId: 1, extractorVersion: 1 }
const text = (bytes) => Buffer.from(bytes).toString('base64url')
const template = (population, identity, hand, session, attempt) => text(population.template(identity, hand, session, attempt, { elementType: 'int8' }))
const handOf = (population, identity, hand, session) => ({
  enroll_capture: template(population, identity, hand, session, 0),
  identify_capture: template(population, identity, hand, session, 1),
})

/** A palm at cosine `cosine` to `target` (unit float), from seeded noise. */
function lookAlike(target, cosine, index) {
  const random = createRandom(hashSeed(seed, 77, index))
  const other = Float64Array.from({ length: dimension }, () => random.gaussian())
  let along = 0
  for (let component = 0; component < dimension; component++) along += other[component] * target[component]
  let norm = 0
  for (let component = 0; component < dimension; component++) {
    other[component] -= along * target[component]
    norm += other[component] ** 2
  }
  const rest = Math.sqrt(1 - cosine * cosine)
  return Float32Array.from(target, (value, component) => cosine * value + (rest * other[component]) / Math.sqrt(norm))
}
const lookAlikeHand = (vector) => {
  const bytes = text(matcher.encodeTemplate({ vector: matcher.quantizeFloat(vector), ...settings, hand: 'left', quality: null }))
  return { enroll_capture: bytes, identify_capture: bytes }
}

const memberId = (index) => {
  const hex = createHash('sha256').update(`import-candidates ${values.tag} ${seed} ${index}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}
const out = fs.openSync(values.out, 'w', 0o600)
const newPeople = []
let chunk = ''
for (let index = 0; index < count; index++) {
  const stored = Math.floor(((index + 0.5) * members) / count) % members
  let line
  // A line enrolled again needs an earlier new person: before there is one, a new person.
  const kind = index % 5 === 3 && newPeople.length === 0 ? 0 : index % 5
  switch (kind) {
    case 1:
      line = {
        left_hand: handOf(seeded, stored, 'left', 1),
        right_hand: handOf(seeded, stored, 'right', 1),
        metadata: { kind: 'stored again', identity: stored },
      }
      break
    case 2: {
      const cosine = threshold + ((index % 2 === 0 ? 1 : -1) * 0.02 * ((index % 7) + 1)) / 7
      line = {
        left_hand: lookAlikeHand(lookAlike(seeded.capture(stored, 'left', 0, 0), cosine, index)),
        right_hand: handOf(strangers, index, 'right', 0),
        metadata: { kind: 'look-alike', identity: stored, cosine },
      }
      break
    }
    case 3: {
      const again = newPeople[Math.floor(createRandom(hashSeed(seed, 78, index)).next() * newPeople.length)]
      line = {
        left_hand: handOf(strangers, again, 'left', 2),
        right_hand: handOf(strangers, again, 'right', 2),
        metadata: { kind: 'line again', identity: again },
      }
      break
    }
    default:
      newPeople.push(index)
      line = { left_hand: handOf(strangers, index, 'left', 0), right_hand: handOf(strangers, index, 'right', 0), metadata: { kind: 'new' } }
  }
  chunk += JSON.stringify({ member_id: memberId(index), display_name: `candidate ${index}`, ...line }) + '\n'
  if (chunk.length > 1 << 20) {
    fs.writeSync(out, chunk)
    chunk = ''
  }
}
fs.writeSync(out, chunk)
fs.closeSync(out)
