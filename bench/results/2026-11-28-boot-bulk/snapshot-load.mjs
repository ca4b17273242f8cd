// A gallery snapshot of N members (2N reference rows, d = 256) read back into a new gallery the
// way a boot does it (gallery-snapshots.ts: openSnapshot, then the rows into the matcher through
// gallery-rows.ts), without the database: the part of a boot this change is about, at sizes the
// shared machine cannot seed in a session. Runs on a build of the service given as its dist/
// directory, so one script times the code before and after (this worktree's dist/, or a copy of
// the earlier one, whose own node_modules/@palmvein/matcher is the matcher it was built with).
//   node snapshot-load.mjs write <dist> <members> <file-directory>   (synthetic rows -> snapshot)
//   node snapshot-load.mjs load <dist> <members> <file-directory>    (timed: file -> gallery)
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'

const [mode, distArg, membersArg, directory] = process.argv.slice(2)
const dist = pathToFileURL(path.resolve(distArg) + '/').href
const members = Number(membersArg)
const DIMENSION = 256
const ENVIRONMENT = '0190a3b4-0000-7000-8000-00000000e5e1'
const load = (file) => import(new URL(file, dist).href)
// The matcher the build resolves (its own node_modules first), not this script's.
const matcherEntry = createRequire(new URL('index.js', dist)).resolve('@palmvein/matcher')
const { createMatcher } = await import(pathToFileURL(matcherEntry).href)
const snapshotFile = await load('domain/galleries/gallery-snapshot-file.js')
const rowsModule = await load('domain/galleries/gallery-rows.js')
const { createKeyring } = await load('keys/keyring.js')
// Fixed keys: the file written by `write` opens in `load`.
const keyring = createKeyring(Buffer.alloc(32, 7))
const environmentKey = Buffer.alloc(32, 9)
const log = { info() {}, warn() {}, error() {} }
const matcher = await createMatcher({ dimension: DIMENSION })
const gallery = matcher.createGallery({ ids: 'uuid' })

if (mode === 'write') {
  // Random int8 rows (no -128, never all zero) under v7-shaped ids; members enroll both hands.
  const random = crypto.randomBytes(1 << 20)
  const vector = new Int8Array(DIMENSION)
  let at = 0
  for (let member = 0; member < members; member++) {
    const id = `0190a3b4-${(member >>> 16).toString(16).padStart(4, '0')}-7${(member & 0xfff).toString(16).padStart(3, '0')}-8000-${member.toString(16).padStart(12, '0')}`
    for (const hand of ['left', 'right']) {
      if (at + DIMENSION > random.length) at = 0
      for (let index = 0; index < DIMENSION; index++) vector[index] = Math.max(-127, (random[at + index] ^ (member & 0xff)) - 128) || 1
      at += 17
      gallery.upsert(id, vector, { partition: hand })
    }
  }
  async function* pages() {
    for (const hand of ['left', 'right']) {
      for (let from = 0; from !== null; ) {
        const page = gallery.readRows(hand, from, 8192)
        from = page.next
        yield { ...page, hand }
      }
    }
  }
  fs.rmSync(directory, { recursive: true, force: true })
  const written = await snapshotFile.writeSnapshot({
    directory,
    keyring,
    environmentKey,
    header: { environment_id: ENVIRONMENT, seq: 1, dimension: DIMENSION, latest_changes: [], rows_hint: gallery.size },
    pages: pages(),
    finish: () => ({ touched: [] }),
  })
  console.log(JSON.stringify({ written: written.rows, bytes: written.bytes }))
} else {
  const started = performance.now()
  const entry = { loaded: 0, total: 2 * members, notStored: 0, environment: null, shardsHeld: null }
  const opened = await snapshotFile.openSnapshot(snapshotFile.snapshotFile(directory, ENVIRONMENT), {
    environmentId: ENVIRONMENT,
    dimension: DIMENSION,
    environmentKey,
    keyring,
  })
  if (rowsModule.loadPageSink) {
    // This change: one pass, a page at a time (and the id maps sized from the expected rows, as restore does).
    for (const hand of rowsModule.HANDS) gallery.reserve(Math.ceil((entry.total / 2) * 1.05), { partition: hand })
    const sink = rowsModule.loadPageSink(log, entry, gallery, new Set())
    await opened.load((page) => sink(page))
  } else {
    // Before: the file verified end to end, then read again a row at a time into upsert.
    const sink = rowsModule.loadSink(log, entry, gallery, opened.trailer.rows)
    await opened.load((memberId, hand, vector) => sink(memberId, hand, vector))
  }
  await opened.close()
  const seconds = (performance.now() - started) / 1000
  const probe = gallery.vector(`0190a3b4-0000-7000-8000-${(0).toString(16).padStart(12, '0')}`, { partition: 'left' })
  const [hit] = await gallery.search(probe, { partition: 'left' })
  console.log(JSON.stringify({ rows: gallery.size, seconds: Number(seconds.toFixed(2)), self_match: hit.score > 0.999, load: fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') }))
}
await matcher.close()
