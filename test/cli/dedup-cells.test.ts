// `palmvein dedup`'s cell search through the real CLI, on a register with planted duplicates
// (members enrolled twice, hard identities among them, and look-alike palms just above and just
// below the threshold, bench/dedup-register.ts): it reports exactly the pairs of the exact
// all-pairs search (`--exact`), a run stopped part-way resumes from its checkpoint to the same
// pairs, and the summary and progress lines say what adjudicators and operators need.
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPlantedRegister } from '../../bench/dedup-register.js'
import { encodeTemplate } from '@palmvein/matcher'
import { useCliTenant } from '../support/cli-tenant.js'
import { base64url, type PalmTenant } from '../support/palms.js'
import { runCli } from '../support/process.js'

const BASE = 1_000
const DUPLICATES = 60
const LOOK_ALIKES = 60
const THRESHOLD = 0.8
const register = createPlantedRegister({ seed: 21, dimension: 256, base: BASE, duplicates: DUPLICATES, lookAlikes: LOOK_ALIKES, threshold: THRESHOLD })
const memberId = (member: number) => `0190a6b2-0000-7000-8000-${String(member).padStart(12, '0')}`

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((text) => JSON.parse(text))

describe('palmvein dedup (cell search)', () => {
  const cli = useCliTenant('dedup-cells-admin@example.com')
  let tenant: PalmTenant, env: Record<string, string | undefined>
  let exact: unknown[]
  beforeAll(async () => {
    ;({ tenant, env } = cli)
    const palm = (member: number, hand: 0 | 1) =>
      base64url(encodeTemplate({ vector: register.palm(member, hand), extractorId: 1, extractorVersion: 1, quality: 90 }))
    const file = await cli.writeLines(
      'planted.ndjson',
      Array.from({ length: register.members }, (_, member) => ({
        member_id: memberId(member),
        display_name: `Person ${member}`,
        left_hand: { enroll_capture: palm(member, 0), identify_capture: palm(member, 0) },
        right_hand: { enroll_capture: palm(member, 1), identify_capture: palm(member, 1) },
      })),
    )
    const imported = await runCli(['import', '--project', tenant.projectId, '--allow-duplicates', file], env)
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: register.members, rejected: 0 })
    const result = await runCli(['dedup', '--environment', tenant.environmentId, '--exact'], env)
    expect(result.code).toBe(0)
    exact = lines(result.stdout)
  }, 240_000)

  it('reports the pairs of the exact search, planted duplicates and look-alikes above the threshold included, none below', async () => {
    const summaryFile = cli.file('summary.json')
    const result = await runCli(['dedup', '--environment', tenant.environmentId, '--probes', '12', '--summary', summaryFile, '--progress-lines'], env)
    expect(result.code).toBe(0)
    const pairs = lines(result.stdout)
    expect(pairs).toEqual(exact)
    // The planted pairs the exact search reports: re-enrolled members (most) and look-alikes above the threshold.
    const planted = pairs.filter((pair) => Number(pair.member_b.slice(-12)) >= BASE)
    expect(planted.length).toBeGreaterThan(DUPLICATES / 2 + LOOK_ALIKES / 4)
    expect(pairs.every((pair) => pair.score >= THRESHOLD)).toBe(true)
    expect(pairs.some((pair) => pair.score < THRESHOLD + 0.02)).toBe(true)

    const summary = JSON.parse(await readFile(summaryFile, 'utf8'))
    expect(summary).toMatchObject({ threshold: THRESHOLD, palms: 2 * register.members, pairs: pairs.length })
    expect(summary.scores.reduce((sum: number, band: { pairs: number }) => sum + band.pairs, 0)).toBe(pairs.length)
    expect(summary.scores[0]).toMatchObject({ from: THRESHOLD, to: THRESHOLD + 0.01 })
    expect(summary.scores[0].pairs).toBe(pairs.filter((pair) => pair.score < THRESHOLD + 0.01).length)
    for (const cluster of summary.clusters) expect(cluster.size).toBeGreaterThan(2)

    const progress = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
    // The phases before the search (minutes at 1M members) each say when they start, in order.
    expect(progress.filter((line) => 'phase' in line).map((line) => line.phase)).toEqual(['reading', 'packing', 'training', 'placing', 'searching'])
    expect(progress.length).toBeGreaterThan(10)
    expect(progress.at(-1)).toMatchObject({ percent: 100, eta_s: 0 })
    expect(progress.find((line) => line.percent >= 10 && line.percent < 100)?.eta_s).toBeGreaterThan(0)
    expect(result.stderr).toMatch(new RegExp(`${pairs.length} pair\\(s\\) at or above ${THRESHOLD} among ${2 * register.members} palm\\(s\\)`))
  }, 60_000)

  it('stops after some cells with a checkpoint, refuses it at another threshold, and resumes it to the same pairs', async () => {
    const checkpoint = cli.file('dedup.checkpoint')
    const common = ['dedup', '--environment', tenant.environmentId, '--probes', '12', '--checkpoint', checkpoint]
    const first = await runCli([...common, '--stop-after', '5'], env)
    expect([first.code, first.stdout]).toEqual([3, ''])
    expect(first.stderr).toMatch(/stopped after 5 cell\(s\)/)
    const saved = JSON.parse(await readFile(checkpoint, 'utf8'))
    expect(saved.cells_done).toBe(5)
    // Replaced durably (store/durable-files.ts): owner-only, and no temporary file left beside it.
    expect((await stat(checkpoint)).mode & 0o777).toBe(0o600)
    expect((await readdir(path.dirname(checkpoint))).filter((name) => name.includes('dedup.checkpoint'))).toEqual(['dedup.checkpoint'])
    expect(saved.pairs.length).toBeLessThan(exact.length)

    // A checkpoint made at another threshold is refused, not overwritten.
    const other = await runCli([...common, '--threshold', '0.7'], env)
    expect([other.code, other.stderr]).toEqual([2, expect.stringMatching(/made at threshold 0.8, not 0.7/)])
    expect(JSON.parse(await readFile(checkpoint, 'utf8'))).toEqual(saved)

    const resumed = await runCli(common, env)
    expect(resumed.code).toBe(0)
    expect(lines(resumed.stdout)).toEqual(exact)
  }, 180_000) // three CLI runs, each opening the database and loading the gallery

  it('refuses --stop-after without a checkpoint and a probe count of 0', async () => {
    const stop = await runCli(['dedup', '--environment', tenant.environmentId, '--stop-after', '2'], env)
    expect([stop.code, stop.stderr]).toEqual([2, expect.stringMatching(/--stop-after needs --checkpoint/)])
    const zero = await runCli(['dedup', '--environment', tenant.environmentId, '--probes', '0'], env)
    expect([zero.code, zero.stderr]).toEqual([2, expect.stringMatching(/--probes.*must be a whole number from 1/)])
  }, 60_000) // two CLI processes

  it('below a threshold of 0.7 searches every pair unless --probes widens the cell search, and says so', async () => {
    const low = ['dedup', '--environment', tenant.environmentId, '--threshold', '0.6']
    const [auto, everyPair] = [await runCli(low, env), await runCli([...low, '--exact'], env)]
    expect([auto.code, everyPair.code]).toEqual([0, 0])
    expect(auto.stderr).toMatch(/threshold 0.6 is below 0.7, where the cell search's recall is not measured: searching every pair/)
    expect(lines(auto.stdout)).toEqual(lines(everyPair.stdout))
    const paused = await runCli([...low, '--checkpoint', cli.file('low.checkpoint'), '--stop-after', '1'], env)
    expect([paused.code, paused.stderr]).toEqual([2, expect.stringMatching(/below a threshold of 0.7 dedup searches every pair/)])
  }, 120_000) // three CLI processes
})
