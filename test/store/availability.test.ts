// The database availability watch: a silent database is down within a probe's limit, a blocked
// event loop of our own is not mistaken for one, and the first answer ends the outage.
import { spawn } from 'node:child_process'
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { watchAvailability } from '../../src/store/engine/availability.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const blockFor = (ms: number) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    /* a long synchronous task */
  }
}

describe('database availability watch', () => {
  it('declares an outage once when the database stops answering, and ends it at the first answer', async () => {
    let silent = false
    const failures: boolean[] = []
    const ups: number[] = []
    const watch = watchAvailability({
      probe: () => (silent ? new Promise<void>(() => {}) : sleep(5)),
      onProbeFailed: (_, first) => failures.push(first),
      onUp: (downForMs) => ups.push(downForMs),
      intervalMs: 20,
      timeoutMs: 200,
    })
    await sleep(100)
    expect(watch.up).toBe(true)
    silent = true
    await sleep(500)
    expect(watch.up).toBe(false)
    expect(failures[0]).toBe(true)
    expect(failures.slice(1).every((first) => !first)).toBe(true)
    silent = false
    await sleep(600)
    expect(watch.up).toBe(true)
    expect(ups).toHaveLength(1)
    watch.stop()
  })

  it('does not mistake its own blocked event loop for a silent database', async () => {
    // The probe is a round trip to another process that answers after 30 ms, as a database does:
    // the answer arrives while this loop is blocked and is read in the I/O phase, after late timers.
    const server = spawn(
      process.execPath,
      [
        '-e',
        `
      const net = require('node:net')
      const server = net.createServer((socket) => socket.on('data', (chunk) => setTimeout(() => socket.write(chunk), 30)))
      server.listen(0, '127.0.0.1', () => console.log(server.address().port))
    `,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const port = Number(await new Promise<string>((resolve) => server.stdout!.once('data', (chunk) => resolve(String(chunk).trim()))))
    const client = net.connect(port, '127.0.0.1')
    await new Promise((resolve) => client.once('connect', resolve))
    let inFlight = false
    const roundTrip = () =>
      new Promise<void>((resolve) => {
        inFlight = true
        client.once('data', () => {
          inFlight = false
          resolve()
        })
        client.write('x')
      })
    const failures: string[] = []
    const watch = watchAvailability({ probe: roundTrip, onProbeFailed: (reason) => failures.push(reason), onUp: () => {}, intervalMs: 20, timeoutMs: 200 })
    try {
      for (let index = 0; index < 3; index++) {
        while (!inFlight) await sleep(1)
        blockFor(700) // a probe is waiting for its answer the whole time
        await sleep(100)
      }
      await sleep(300)
      expect(failures).toEqual([])
      expect(watch.up).toBe(true)
    } finally {
      watch.stop()
      client.destroy()
      server.kill()
    }
  })
})
