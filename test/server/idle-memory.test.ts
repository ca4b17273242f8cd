// A quiet service gives memory back (src/idle-memory-release.ts): the rule, then the service.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { watchIdleMemory } from '../../src/runtime/idle-memory-release.js'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { startServeProcess } from '../support/process.js'

const MIB = 2 ** 20

describe('the quiet-service rule', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  function watched() {
    vi.useFakeTimers()
    const state = { started: 0, inFlight: 0, busy: false, rss: 200 * MIB, releases: [] as number[] }
    const stop = watchIdleMemory({
      intervalMs: 1_000,
      requests: () => ({ started: state.started, inFlight: state.inFlight }),
      busy: () => state.busy,
      rss: () => state.rss,
      release: () => {
        state.rss -= 40 * MIB
      },
      onRelease: (before) => state.releases.push(before / MIB),
    })
    return { state, stop, tick: () => vi.advanceTimersByTimeAsync(1_000) }
  }

  it('releases once a check finds it quiet, and again only after RSS grew by 16 MiB', async () => {
    const { state, stop, tick } = watched()
    await tick()
    expect(state.releases).toEqual([200])
    state.rss += 15 * MIB
    await tick()
    await tick()
    expect(state.releases).toEqual([200])
    state.rss += 1 * MIB
    await tick()
    expect(state.releases).toEqual([200, 176])
    stop()
    state.rss += 100 * MIB
    await tick()
    expect(state.releases).toEqual([200, 176])
  })

  it('does not release while requests arrive, one is in flight, or a gallery loads', async () => {
    const { state, stop, tick } = watched()
    // One request a second since the last check is traffic, not quiet.
    state.started += 1
    await tick()
    state.inFlight = 1
    await tick()
    state.inFlight = 0
    state.busy = true
    await tick()
    expect(state.releases).toEqual([])
    state.busy = false
    await tick()
    expect(state.releases).toEqual([200])
    stop()
  })
})

describe('a quiet service', () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
  })
  afterAll(async () => {
    await storage.cleanup()
  })
  const serve = (env: Record<string, string | undefined>) =>
    startServeProcess({ PALMVEIN_DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl ?? undefined, PORT: '0', HOST: '127.0.0.1', ...env })

  it('`palmvein serve` caps its malloc arenas at 1, gives its garbage back once nothing happens (checked every 10 s unless set), says so in its log, and still serves', async () => {
    const server = await serve({ MALLOC_ARENA_MAX: undefined })
    try {
      expect(server.output()).toContain('"Memory: one malloc arena (MALLOC_ARENA_MAX sets another number)"')
      const released = () =>
        server
          .output()
          .split('\n')
          .find((line) => line.includes('Memory: quiet, garbage released'))
      for (let waited = 0; !released() && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100))
      const line = JSON.parse(released() ?? '{}') as { rss_before_mib?: number; rss_after_mib?: number }
      expect(line.rss_before_mib).toBeGreaterThan(0)
      expect(line.rss_after_mib).toBeLessThanOrEqual(line.rss_before_mib!)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    } finally {
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    }
  }, 60_000)

  it("leaves the malloc arenas to glibc when the environment sets MALLOC_ARENA_MAX (the operator's number)", async () => {
    const server = await serve({ MALLOC_ARENA_MAX: '4' })
    try {
      expect(server.output()).toMatch(/HTTP: listening on/)
      expect(server.output()).not.toMatch(/malloc arena/)
    } finally {
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    }
  }, 60_000)
})
