// postgres.js 3.4.9 crashes the process when a connection dies under a transaction or a reserved
// connection: the next write (the transaction's ROLLBACK) is scheduled on a socket that closed()
// already nulled, and the TypeError escapes from a setImmediate callback (porsager/postgres#1154,
// #1208; the fix, PR #1209, is not released). A database failover or pg_terminate_backend would take
// palmvein down. This postinstall step applies that fix to the installed copy, wherever npm put it:
// the write fails the query with CONNECTION_CLOSED instead, and a connection found without its
// socket goes back to the pool as closed, so the pool reconnects it rather than failing on it. It also drops a half-written buffer when
// a connection closes, so a reconnect does not send it ahead of its startup message.
//
// It also resumes the connection's socket when a COPY … TO STDOUT ends (porsager/postgres#499; the
// fix, PR #1016, is not merged): a COPY stream that buffers past its mark pauses the socket, and
// when the COPY's last rows and its end arrived in the same chunk, nothing resumed it, so the next
// query on that connection waited forever. A boot reads its pages by COPY on PostgreSQL.
//
// And it keeps the connection pool's queues from growing (src/queue.js): `shift` leaves an
// `undefined` slot behind unless it empties the queue, and `remove` scans from the array's start.
// The pool takes an idle connection by `shift` and, in the same step, `remove`s it from the idle
// queue again (not found: a scan of every slot). While two or more connections stay idle, which is
// the steady state of a service whose pool is larger than its concurrency, the idle queue never
// empties: it grew by one slot per query and every query scanned them all. Measured on the queue
// alone with four idle connections: 25 µs a query on average over the first 200 000 queries and
// 227 µs over the fifth 200 000 (0.06 µs with the fix). Now `shift` drops the dead slots once they
// are half the array, and `remove` starts at the live head.
//
// Idempotent; a copy that already carries a fix (a fixed release) is left alone. The runtime
// check in src/store/engine/postgres-patch.ts warns at start on an unpatched copy.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

export const MARKER = '/* palmvein: nextWrite guard */'
export const COPY_MARKER = '/* palmvein: resume after COPY */'
export const QUEUE_MARKER = '/* palmvein: queue compaction */'

const GUARD_FROM = `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`
const GUARD_TO = `  function nextWrite(fn) {
    if (!socket) { ${MARKER}
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      const closedError = Errors.connection('CONNECTION_CLOSED', options)
      error(closedError)
      query = null
      // A reserved connection released after its socket died sits in the open queue: close it for the pool.
      connection.queue !== queues.closed && connection.queue !== queues.connecting && onclose(connection, closedError)
      return false
    }
    const x = socket.write(chunk, fn)`
const CLOSED_FROM = `    clearImmediate(nextWriteTimer)
    socket.removeListener('data', data)`
const CLOSED_TO = `    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    socket.removeListener('data', data)`

const COPY_DONE_FROM = `  function CopyDone() {
    stream && stream.push(null)
    stream = null`
const COPY_DONE_TO = `${COPY_DONE_FROM}
    socket.resume() ${COPY_MARKER}`

const REMOVE_FROM = `    remove: (x) => {
      const index = xs.indexOf(x)
      return index === -1
        ? null
        : (xs.splice(index, 1), x)`
const REMOVE_TO = `    remove: (x) => {
      const at = xs.indexOf(x, index) ${QUEUE_MARKER}
      return at === -1
        ? null
        : (xs.splice(at, 1), x)`
const SHIFT_FROM = `      } else {
        xs[index - 1] = undefined
      }`
const SHIFT_TO = `      } else if (index >= 32 && 2 * index >= xs.length) {
        xs = xs.slice(index)
        index = 0
      } else {
        xs[index - 1] = undefined
      }`

// Each fix: the file it applies to, its marker, then what it replaces and with what.
const FIXES = [
  {
    file: 'connection.js',
    marker: MARKER,
    replacements: [
      [GUARD_FROM, GUARD_TO],
      [CLOSED_FROM, CLOSED_TO],
    ],
  },
  { file: 'connection.js', marker: COPY_MARKER, replacements: [[COPY_DONE_FROM, COPY_DONE_TO]] },
  {
    file: 'queue.js',
    marker: QUEUE_MARKER,
    replacements: [
      [REMOVE_FROM, REMOVE_TO],
      [SHIFT_FROM, SHIFT_TO],
    ],
  },
]

function patch(file) {
  const original = readFileSync(file, 'utf8')
  let source = original
  const outcomes = FIXES.filter((fix) => path.basename(file) === fix.file).map(({ marker, replacements }) => {
    if (source.includes(marker)) return 'already patched'
    if (!replacements.every(([from]) => source.includes(from))) return 'not the expected source (left alone)'
    for (const [from, to] of replacements) source = source.replace(from, to)
    return 'patched'
  })
  if (source !== original) writeFileSync(file, source)
  return outcomes.join(', ')
}

/** The installed package's directory: its entry point resolved as ours would be, then up to its package.json. */
function packageRoot(name) {
  let directory = path.dirname(createRequire(import.meta.url).resolve(name))
  while (!existsSync(path.join(directory, 'package.json')) || JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')).name !== name) {
    const parent = path.dirname(directory)
    if (parent === directory) throw new Error(`no package.json of ${name} above its entry point`)
    directory = parent
  }
  return directory
}

let root
try {
  root = packageRoot('postgres')
} catch (error) {
  console.log(`patch-postgres: ${error.message}; nothing to patch`)
  process.exit(0)
}
for (const relative of ['src/connection.js', 'cjs/src/connection.js', 'src/queue.js', 'cjs/src/queue.js']) {
  const file = path.join(root, relative)
  console.log(`patch-postgres: ${path.relative(process.cwd(), file) || file}: ${patch(file)}`)
}
