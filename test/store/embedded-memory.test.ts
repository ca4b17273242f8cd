// A new data directory's embedded database is created in a thread that exits (pglite-thread.ts):
// PGlite keeps the second instance it runs initdb in, 500 MiB of WASM memory, for as long as the
// database is open. Measured as this process's RSS (a file of its own: vitest forks a process per
// file), with a margin of hundreds of MiB either way.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { openEmbedded, type EmbeddedDatabase } from '../../src/store/engine/embedded.js'

const MIB = 2 ** 20
let dir = ''
let embedded: EmbeddedDatabase | null = null
let before = 0

// Opened as other suites open their database, in a hook: creating one takes 5-25 s here.
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-embedded-memory-'))
  before = process.memoryUsage.rss()
  embedded = await openEmbedded(dir)
})
afterAll(async () => {
  await embedded?.close()
  if (dir) await fs.rm(dir, { recursive: true, force: true })
})

it("keeps none of the memory of creating a new data directory's database", async () => {
  await fs.access(path.join(dir, 'pglite', 'PG_VERSION'))
  // An open PGlite at its defaults here is ~130 MiB (up to 300 as its WASM code tiers up); with
  // initdb's instance kept, ~650: the limit sits halfway. Node 24 gives the ended thread's memory
  // back a moment after the thread exits (Node 20 at once).
  await vi.waitFor(() => expect((process.memoryUsage.rss() - before) / MIB).toBeLessThan(390), { timeout: 20_000, interval: 250 })
})
