// The import lines of a slice of identities, written to a file: a worker thread of seed.mjs. The
// synthetic population is a pure function of its seed, so every worker builds the same one and
// the slices' files, concatenated in order, are the lines one thread would have written (at 10M
// members one thread took ~45 minutes).
import fs from 'node:fs'
import { workerData } from 'node:worker_threads'

const { population: options, identities, tries, memberIds, attemptPairs, file } = workerData
const matcher = await import('@palmvein/matcher')
const population = matcher.createSyntheticPopulation(options)
const ids = memberIds.split(',')
const capture = (identity, hand, attempt) => Buffer.from(population.template(identity, hand, 0, attempt, { elementType: 'int8' })).toString('base64url')
// Enrollment captures as a terminal sends them: int8 PVT1, session 0, two attempts per hand.
const hand = (identity, side) => {
  const [first, second] = attemptPairs[tries[identity]]
  return { enroll_capture: capture(identity, side, first), identify_capture: capture(identity, side, second) }
}
const out = fs.openSync(file, 'w', 0o600)
let chunk = ''
for (const [index, identity] of identities.entries()) {
  chunk +=
    JSON.stringify({
      member_id: ids[index],
      display_name: `synthetic ${identity}`,
      metadata: { identity },
      left_hand: hand(identity, 'left'),
      right_hand: hand(identity, 'right'),
    }) + '\n'
  if (chunk.length > 1 << 20) {
    fs.writeSync(out, chunk)
    chunk = ''
  }
}
fs.writeSync(out, chunk)
fs.closeSync(out)
