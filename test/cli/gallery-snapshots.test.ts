// Gallery snapshots through real `palmvein serve` processes (the built dist/): a boot reads the
// environment's encrypted snapshot and replays the change log past it; a process killed (SIGKILL)
// while it writes one loses no acknowledged enrollment; a snapshot with a flipped byte, cut short,
// or written by the previous version (format 1) is refused and the gallery read from the database
// with the same identify answers; a member erased after the snapshot is not found after the
// reboot, and the next snapshot no longer holds the member; a snapshot whose latest changes the
// database's change log does not hold (a backup restored, then written to) is refused.
import { createHash } from 'node:crypto'
import { watch } from 'node:fs'
import fs from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadLocalIssuer } from '../../src/auth/identity-tokens.js'
import { loadConfig } from '../../src/config.js'
import { openSnapshot, snapshotFile } from '../../src/domain/galleries/gallery-snapshot-file.js'
import { snapshotDirectory } from '../../src/domain/galleries/gallery-snapshots.js'
import { uuidText } from '../../src/ids.js'
import { createKeyring, loadMasterKey, seal } from '../../src/keys/keyring.js'
import { openDatabase } from '../../src/store/engine/database.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { enrollBody, identifyBody, population, waitUntilReady } from '../support/palms.js'
import { startBuiltServeProcess } from '../support/process.js'
import { expectStatus, request } from '../support/service.js'

const palms = population({ seed: 53, identities: 60 })
const SNAPSHOT_WRITTEN = 'Galleries: snapshot written'
const FROM_SNAPSHOT = 'ready from its snapshot'
const REFUSED = 'snapshot not used'
const BOOT_LOADS_DONE = 'Galleries: boot loads done'

type Served = Awaited<ReturnType<typeof startBuiltServeProcess>>

describe(`gallery snapshots (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  let token: string
  let apiKey: string
  let projectId: string
  let environmentId: string
  let serving: Served | null = null
  const members = new Map<number, string>()
  const env = (intervalMs: number) => ({
    PALMVEIN_DATA_DIR: storage.dataDir,
    DATABASE_URL: storage.databaseUrl ?? undefined,
    PORT: '0',
    HOST: '127.0.0.1',
    PALMVEIN_SELF_SERVICE_PLANS: 'sandbox,business,enterprise',
    PALMVEIN_WEBHOOK_WORKER: 'false',
    PALMVEIN_METRICS_PORT: '0',
    PALMVEIN_MATCHER_THREADS: '1',
    PALMVEIN_SNAPSHOT_INTERVAL_MS: String(intervalMs),
  })
  const directory = () => snapshotDirectory({ snapshotDir: null, dataDir: storage.dataDir })
  const file = () => snapshotFile(directory(), environmentId)
  const count = (text: string, what: string) => text.split(what).length - 1

  async function start(intervalMs: number): Promise<Served> {
    serving = await startBuiltServeProcess(env(intervalMs))
    await waitUntilReady(serving.url, 60_000)
    // The log reaches the pipe a moment after /healthz answers: read it once the loads' last line is in.
    await until(serving, BOOT_LOADS_DONE, 1)
    return serving
  }
  async function kill(): Promise<string> {
    const served = serving!
    serving = null
    served.child.kill('SIGKILL')
    await served.exited
    return served.output()
  }
  const call = (method: string, route: string, body?: unknown, auth = apiKey) => request(serving!.url, method, route, { auth, body })

  async function enrollNew(identity: number): Promise<void> {
    const created = await call('POST', `/v1/projects/${projectId}/members`, { display_name: `P${identity}` })
    expectStatus(created, 201)
    expectStatus(await call('POST', `/v1/projects/${projectId}/biometrics/enroll`, enrollBody(palms, identity, created.body.member_id)), 200)
    members.set(identity, created.body.member_id)
  }
  /** Each identity's answer to a left-hand capture: [status, member, score]. */
  async function answers(identities: readonly number[]) {
    return Promise.all(
      identities.map(async (identity) => {
        const answer = await call('POST', `/v1/projects/${projectId}/biometrics/identify`, identifyBody(palms, identity, 'left'))
        expectStatus(answer, 200)
        return [identity, answer.body.status, answer.body.member_id, answer.body.match_score]
      }),
    )
  }
  async function expectEveryMemberFound() {
    const found = await answers([...members.keys()])
    expect(found).toEqual([...members].map(([identity, memberId]) => [identity, 'Found', memberId, expect.any(Number)]))
  }
  /** Until the process has logged `what` `times` times (beforeAll too, where expect.poll is not offered). */
  async function until(served: Served, what: string, times: number) {
    for (const deadline = Date.now() + 30_000; count(served.output(), what) < times; ) {
      if (Date.now() > deadline) throw new Error(`no "${what}" within 30 s:\n${served.output()}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const untilWritten = (served: Served, times: number) => until(served, SNAPSHOT_WRITTEN, times)

  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
    const issuer = await loadLocalIssuer({ dataDir: storage.dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
    token = await issuer.sign('snapshots-admin@example.com', 3600)
    await start(200)
    const org = (await call('POST', '/v1/organizations', { name: 'Snapshots' }, token)).body
    environmentId = (await call('POST', `/v1/organization/${org.id}/environments`, { name: 'palms' }, token)).body.id
    projectId = (await call('POST', `/v1/organization/${org.id}/projects`, { name: 'p', environment_id: environmentId, plan: 'enterprise' }, token)).body.id
    apiKey = (await call('POST', `/v1/organization/${org.id}/api-keys`, { name: 'k', project_ids: null }, token)).body.key
    for (let identity = 0; identity < 12; identity++) await enrollNew(identity)
    await untilWritten(serving!, 1)
  }, 180_000)
  afterAll(async () => {
    if (serving) await kill()
    await storage?.cleanup()
  })

  it('a process killed while it writes a snapshot boots again with every acknowledged enrollment', async () => {
    // Each enrollment makes the next pass write a snapshot; the process is frozen (SIGSTOP) the
    // moment the temporary file appears and killed if the write is still under way (else it goes on).
    let identity = 12
    let killedMidWrite = false
    for (let attempt = 0; attempt < 25 && !killedMidWrite; attempt++) {
      const served = serving!
      await enrollNew(identity++)
      const frozen = await new Promise<boolean>((resolve) => {
        const watcher = watch(directory(), (_event, name) => {
          if (!name?.endsWith('.tmp')) return
          served.child.kill('SIGSTOP')
          clearTimeout(timer)
          watcher.close()
          resolve(true)
        })
        const timer = setTimeout(() => {
          watcher.close()
          resolve(false)
        }, 5_000)
      })
      if (!frozen) continue
      if ((await fs.readdir(directory())).some((name) => name.endsWith('.tmp'))) {
        killedMidWrite = true
        await kill()
      } else served.child.kill('SIGCONT')
    }
    expect(killedMidWrite).toBe(true)
    // An enrollment acknowledged after the kill's snapshot began is in the database only.
    const rebooted = await start(200)
    expect(rebooted.output()).toContain(FROM_SNAPSHOT)
    await expectEveryMemberFound()
    await enrollNew(identity++)
    await kill()
    await start(200)
    await expectEveryMemberFound()
  }, 180_000)

  it('a snapshot with a flipped byte, cut short, or of the previous format (1), is refused and the database read, with the same answers', async () => {
    const served = serving!
    await untilWritten(served, 1)
    const before = await answers([...members.keys(), 55, 56])
    await kill()
    const original = await fs.readFile(file())
    const spoiled = [Buffer.from(original), original.subarray(0, Math.floor(original.length * 0.7)), await asFormat1()]
    spoiled[0][Math.floor(original.length / 2)] ^= 0x01
    const reasons = ['does not verify', 'cut short', 'the snapshot is of format 1, this version reads format 2']
    for (const [index, bytes] of spoiled.entries()) {
      await fs.writeFile(file(), bytes)
      const rebooted = await start(60_000)
      expect(rebooted.output()).toContain(REFUSED)
      expect(rebooted.output()).toContain(reasons[index])
      expect(rebooted.output()).not.toContain(FROM_SNAPSHOT)
      expect(await answers([...members.keys(), 55, 56])).toEqual(before)
      await kill()
    }
    // The untouched file is used again.
    await fs.writeFile(file(), original)
    const rebooted = await start(60_000)
    expect(rebooted.output()).toContain(FROM_SNAPSHOT)
    expect(await answers([...members.keys(), 55, 56])).toEqual(before)
  }, 180_000)

  it('a member erased after the snapshot is not found after a reboot from it, and the next snapshot drops the member', async () => {
    // Started with a long interval: no snapshot is written after the erasure before the kill.
    if (serving) await kill()
    const served = await start(60_000)
    const [identity, memberId] = [...members][0]
    expectStatus(await call('DELETE', `/v1/projects/${projectId}/members/${memberId}`), 204)
    members.delete(identity)
    expect(count(served.output(), SNAPSHOT_WRITTEN)).toBe(0)
    await kill()
    expect(await snapshotMembers()).toContain(memberId)

    const rebooted = await start(200)
    expect(rebooted.output()).toContain(FROM_SNAPSHOT)
    expect((await answers([identity]))[0]).toEqual([identity, 'NotFound', null, expect.any(Number)])
    await expectEveryMemberFound()
    // The erasure is a change: the next pass writes a snapshot without the member.
    await untilWritten(rebooted, 1)
    await kill()
    expect(await snapshotMembers()).not.toContain(memberId)
    expect((await snapshotMembers()).sort()).toEqual([...members.values()].flatMap((id) => [id, id]).sort())
  }, 180_000)

  it("a snapshot whose latest changes the database's change log does not hold (a backup restored and written to since) is refused", async () => {
    if (serving) await kill()
    const before = await changeSeq()
    await start(200)
    const lost = [40, 41]
    for (const identity of lost) await enrollNew(identity)
    // No change since the last test's snapshot: the first one written here holds a lost member.
    await untilWritten(serving!, 1)
    await kill()
    const held = await fs.readFile(file())
    const lostIds = lost.map((identity) => members.get(identity)!)
    await restoreBackupTakenAt(before, lostIds)
    for (const identity of lost) members.delete(identity)
    // Written to again: the restored database hands out the lost change numbers anew (the snapshot
    // of the lost timeline is refused meanwhile: it is newer than the change log).
    await start(60_000)
    for (const identity of [42, 43, 44]) await enrollNew(identity)
    await kill()
    await fs.writeFile(file(), held)
    const rebooted = await start(60_000)
    expect(rebooted.output()).toContain(REFUSED)
    // The snapshot holds one or both lost members (a pass may run between the two enrollments).
    expect(rebooted.output()).toMatch(/the database's change log lacks [12] of its \d+ latest changes/)
    expect(rebooted.output()).not.toContain(FROM_SNAPSHOT)
    await expectEveryMemberFound()
    expect((await answers(lost)).map(([, status]) => status)).toEqual(['NotFound', 'NotFound'])
  }, 180_000)

  /** The gallery change sequence's last number (the service stopped). */
  async function changeSeq(): Promise<number> {
    const db = await openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir })
    const [{ last_value }] = await db.sql<{ last_value: number }[]>`SELECT last_value FROM gallery_change_seq`
    await db.close()
    return last_value
  }

  /**
   * What restoring a backup taken when the sequence was at `seq` does to the gallery's tables (the
   * service stopped): the members enrolled since gone, with their rows and change-log entries, and
   * their change numbers handed out again.
   */
  async function restoreBackupTakenAt(seq: number, memberIds: string[]): Promise<void> {
    const db = await openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir })
    await db.sql`DELETE FROM gallery_changes WHERE member_id = ANY(${memberIds}::uuid[])`
    await db.sql`DELETE FROM members WHERE id = ANY(${memberIds}::uuid[])`
    await db.sql`SELECT setval('gallery_change_seq', ${seq})`
    await db.close()
  }

  /** The snapshot on disk opened as the service opens it (the service stopped), and the keys it is sealed under. */
  async function openOnDisk() {
    const config = loadConfig({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl }, {})
    const keyring = createKeyring((await loadMasterKey(config)).key)
    // Read with the service stopped: the embedded database has one process at a time.
    const db = await openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir })
    const [environment] = await db.sql<{ wrapped_key: Buffer; dimension: number }[]>`
      SELECT wrapped_key, dimension FROM environments WHERE id = ${environmentId}`
    await db.close()
    const environmentKey = keyring.environmentKey(environmentId, environment.wrapped_key)
    const opened = await openSnapshot(file(), { environmentId, dimension: environment.dimension, environmentKey, keyring })
    return { opened: opened!, keyring, environmentKey }
  }

  /** The member ids in the snapshot on disk, one per row. */
  async function snapshotMembers(): Promise<string[]> {
    const { opened } = await openOnDisk()
    const ids: string[] = []
    await opened.load((page) => {
      for (let row = 0; row < page.count; row++) ids.push(uuidText(page.ids, row * 16))
    })
    await opened.close()
    return ids
  }

  /** The snapshot on disk rewritten as the previous version wrote it (format 1: id | hand | vector a row), genuinely sealed. */
  async function asFormat1(): Promise<Buffer> {
    const { opened, keyring, environmentKey } = await openOnDisk()
    const { dimension, seq, written_at } = opened.header
    const rows: Buffer[] = []
    const trailer = await opened.load((page) => {
      for (let row = 0; row < page.count; row++) {
        const vector = Buffer.from(page.vectors.buffer, page.vectors.byteOffset + row * dimension, dimension)
        rows.push(Buffer.from(page.ids.subarray(row * 16, (row + 1) * 16)), Buffer.from([page.hand === 'left' ? 0 : 1]), vector)
      }
    })
    await opened.close()
    const { key, wrapped } = keyring.newKey(environmentKey, `gallery-snapshot:${environmentId}`)
    const header = Buffer.from(
      JSON.stringify({ format: 1, environment_id: environmentId, seq, dimension, written_at, wrapped_key: wrapped.toString('base64') }),
    )
    const digest = createHash('sha256').update(header).digest('hex')
    const context = (index: number, last: boolean) => `gallery-snapshot:${environmentId}:${digest}:${index}:${last ? 'end' : 'rows'}`
    const chunks = [seal(key, Buffer.concat(rows), context(0, false)), seal(key, Buffer.from(JSON.stringify(trailer)), context(1, true))]
    const prefixed = (bytes: Buffer) => {
      const length = Buffer.alloc(4)
      length.writeUInt32BE(bytes.length)
      return [length, bytes]
    }
    return Buffer.concat([Buffer.from('PVGSNAP1'), ...prefixed(header), ...chunks.flatMap(prefixed)])
  }
})
