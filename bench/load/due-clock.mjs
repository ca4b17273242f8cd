// Sends on time for the open-loop generators. Node's timers run on a 1 ms grid (libuv counts in
// whole milliseconds), so a generator ticking on setTimeout sends each request up to a tick after
// it was due. At 1 000/s that was 0.6 ms at the median and 1.1-1.5 ms at p95, and since latency
// is counted from the due time (no coordinated omission), the generator's lateness was reported as
// the server's. Here a worker thread sleeps with Atomics.wait (a futex, microsecond timeouts)
// until each request is due and wakes the generator's event loop with one message for all the
// requests due by then.
import { Worker } from 'node:worker_threads'

const CLOCK = `
const { parentPort, workerData } = require('node:worker_threads')
const { first, interval, total } = workerData
const cell = new Int32Array(new SharedArrayBuffer(4))
// Absolute times: each thread's performance.now() counts from its own start.
const now = () => performance.timeOrigin + performance.now()
let next = 0
while (next < total) {
  const wait = first + next * interval - now()
  if (wait > 0) Atomics.wait(cell, 0, 0, wait)
  const at = now()
  let last = next
  while (last + 1 < total && first + (last + 1) * interval <= at) last += 1
  parentPort.postMessage(last)
  next = last + 1
}
`

/**
 * Calls `fire(index, due)` for request 0 … total-1, request i at `start + i * interval` (times
 * from this thread's performance.now()); resolves once the last has been fired.
 */
export function fireOnSchedule({ start, interval, total, fire }) {
  if (total <= 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const clock = new Worker(CLOCK, { eval: true, workerData: { first: performance.timeOrigin + start, interval, total } })
    let fired = 0
    clock.on('message', (last) => {
      for (; fired <= last; fired += 1) fire(fired, start + fired * interval)
      if (fired === total) resolve()
    })
    clock.once('error', reject)
    clock.once('exit', (code) => {
      if (fired < total) reject(new Error(`the send clock stopped (exit ${code}) after ${fired} of ${total}`))
    })
  })
}
