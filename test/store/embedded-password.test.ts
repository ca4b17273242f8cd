// The embedded database's loopback port is not an open door: every connection must present the
// random per-start password kept in the data directory's 0600 pglite.json.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../src/store/engine/database.js'
import { openEmbedded, type EmbeddedDatabase } from '../../src/store/engine/embedded.js'

describe('embedded database password', () => {
  let dir: string
  let embedded: EmbeddedDatabase
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-embedded-auth-'))
    embedded = await openEmbedded(dir)
  })
  afterAll(async () => {
    await embedded.close()
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('keeps a random password in a pglite.json only its owner can read', async () => {
    const file = path.join(dir, 'pglite.json')
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(await fs.readFile(file, 'utf8'))
    expect(stored).toEqual({ pid: process.pid, port: embedded.port, password: embedded.password })
    expect(embedded.password).toMatch(/^[A-Za-z0-9_-]{32}$/)
  })

  it('refuses a connection without the password, with a wrong one or a longer one (28P01), and serves one with it', async () => {
    for (const password of [undefined, 'postgres', `${embedded.password}x`]) {
      const intruder = createClient({ host: embedded.host, port: embedded.port, password, max: 1 })
      await expect(intruder`SELECT 1`, `password ${password}`).rejects.toMatchObject({ code: '28P01' })
      await intruder.end({ timeout: 1 })
    }
    const owner = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 1 })
    expect(await owner`SELECT 1 AS one`).toEqual([{ one: 1 }])
    await owner.end({ timeout: 1 })
  })
})
