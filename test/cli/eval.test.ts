// palmvein eval through the CLI: a synthetic set and the same set as a template file give the same
// report; the report has the ISO/IEC 19795-1 figures and the charts; bad input is refused by line.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { syntheticTemplateSet } from '../../src/domain/accuracy/synthetic-set.js'
import { encodeTemplate } from '@palmvein/matcher'
import { runCli } from '../support/process.js'

describe('palmvein eval', () => {
  let dir: string
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-eval-'))
  })
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })
  const read = async (out: string) => JSON.parse(await fs.readFile(path.join(out, 'report.json'), 'utf8'))

  it('reports FNIR at FPIR, DET, CMC and the decisions for a synthetic set, and the same for it as a template file', { timeout: 120_000 }, async () => {
    const out = path.join(dir, 'synthetic')
    const run = await runCli(['eval', '--synthetic', '--identities', '150', '--unenrolled', '150', '--seed', '7', '--fpir', '0.01,0.001', '--out', out], {})
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ gallery_size: 150, mated_probes: 300, non_mated_probes: 300, match_threshold: 0.8 })
    const report = await read(out)
    expect(report).toMatchObject({ gallery_size: 150, gallery_references: 300, mated_probes: 300, non_mated_probes: 300, dimension: 256 })
    expect(report.operating_points.map((point: { target_fpir: number }) => point.target_fpir)).toEqual([0.01, 0.001])
    expect(report.operating_points[0]).toMatchObject({ threshold: expect.any(Number), fpir: { trials: 300 }, fnir: { trials: 300 } })
    expect(report.operating_points[0].fpir.rate).toBeLessThanOrEqual(0.01)
    expect(report.operating_points[1]).toMatchObject({ threshold: null, note: 'not measurable with 300 non-mated probes (needs at least 1000)' })
    const { mated, nonMated } = report.at_match_threshold.decisions
    expect(mated.Found + mated.FoundWrong + mated.Ambiguous + mated.NotFound).toBe(300)
    expect(nonMated.Found + nonMated.Ambiguous + nonMated.NotFound).toBe(300)
    expect(report.at_match_threshold.fnir.errors).toBe(300 - mated.Found)
    expect(report.cmc).toHaveLength(10)
    expect(report.cmc[9].rate).toBeGreaterThanOrEqual(report.cmc[0].rate)
    expect(report.det.length).toBeGreaterThan(10)
    for (const chart of ['det.svg', 'scores.svg', 'cmc.svg']) expect(await fs.readFile(path.join(out, chart), 'utf8')).toMatch(/^<svg [^>]*>/)
    expect(await fs.readFile(path.join(out, 'report.md'), 'utf8')).toContain('## Thresholds for a target FPIR')

    const file = path.join(dir, 'templates.ndjson')
    await fs.writeFile(
      file,
      [...syntheticTemplateSet({ enrolled: 150, unenrolled: 150, seed: 7, dimension: 256 })].map((line) => JSON.stringify(line)).join('\n') + '\n',
    )
    const fromFile = path.join(dir, 'file')
    expect((await runCli(['eval', '--templates', file, '--fpir', '0.01,0.001', '--out', fromFile], {})).code).toBe(0)
    expect(await read(fromFile)).toEqual(report)
  })

  it('gives the known answer for a hand-made template file', async () => {
    // d = 128, one left-hand reference each for A, B, C on axes 0, 1, 2. Probes: A exactly (1.0);
    // B at 0.6 (under the threshold); C closer to A (0.9) than to itself (0.44): a misidentification.
    // Non-mated: D at 0.85 from B (a false positive at 0.8), E orthogonal to every reference.
    const vector = (entries: Array<[number, number]>) => {
      const values = new Float32Array(128)
      for (const [axis, value] of entries) values[axis] = value
      return values
    }
    const line = (subject: string, role: string, entries: Array<[number, number]>) =>
      JSON.stringify({
        subject,
        hand: 'left',
        role,
        capture: Buffer.from(encodeTemplate({ vector: vector(entries), extractorId: 1, extractorVersion: 1, hand: 'left' })).toString('base64url'),
      })
    const file = path.join(dir, 'known.ndjson')
    await fs.writeFile(
      file,
      [
        line('A', 'gallery', [[0, 1]]),
        line('B', 'gallery', [[1, 1]]),
        line('C', 'gallery', [[2, 1]]),
        line('A', 'probe', [[0, 1]]),
        line('B', 'probe', [
          [1, 0.6],
          [3, 0.8],
        ]),
        line('C', 'probe', [
          [0, 0.9],
          [2, Math.sqrt(0.19)],
        ]),
        line('D', 'probe', [
          [1, 0.85],
          [4, Math.sqrt(1 - 0.85 ** 2)],
        ]),
        line('E', 'probe', [[5, 1]]),
      ].join('\n') + '\n',
    )
    const out = path.join(dir, 'known')
    expect((await runCli(['eval', '--templates', file, '--threshold', '0.8', '--fpir', '0.5', '--out', out], {})).code).toBe(0)
    const report = await read(out)
    expect(report).toMatchObject({ gallery_size: 3, mated_probes: 3, non_mated_probes: 2, dimension: 128 })
    expect(report.at_match_threshold.fnir).toMatchObject({ errors: 2, trials: 3 })
    expect(report.at_match_threshold.fpir).toMatchObject({ errors: 1, trials: 2 })
    expect(report.at_match_threshold.decisions).toEqual({
      mated: { Found: 1, FoundWrong: 1, Ambiguous: 0, NotFound: 1 },
      nonMated: { Found: 1, Ambiguous: 0, NotFound: 1 },
    })
    expect(report.cmc.slice(0, 2)).toEqual([
      { rank: 1, rate: 2 / 3 },
      { rank: 2, rate: 1 },
    ])
    // FPIR 0.5 allows one of the two non-mated probes through: the threshold sits just above E's 0.
    expect(report.operating_points[0].threshold).toBeGreaterThan(0)
    expect(report.operating_points[0].threshold).toBeLessThan(0.01)
    expect(report.operating_points[0].fnir).toMatchObject({ errors: 1 })
  })

  it('refuses bad input by line number, and bad usage, with exit code 2', async () => {
    const file = path.join(dir, 'bad.ndjson')
    const good = [...syntheticTemplateSet({ enrolled: 1, unenrolled: 0, seed: 1, dimension: 256 })].slice(0, 2).map((line) => JSON.stringify(line))
    await fs.writeFile(file, [...good, JSON.stringify({ subject: 's', hand: 'left', role: 'probe', capture: 'not-a-capture' })].join('\n'))
    expect(await runCli(['eval', '--templates', file, '--out', path.join(dir, 'bad')], {})).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('line 3: capture:'),
    })
    expect(await runCli(['eval', '--synthetic', '--templates', file, '--out', dir], {})).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('either --templates'),
    })
    expect(await runCli(['eval', '--synthetic'], {})).toMatchObject({ code: 2, stderr: expect.stringContaining('--out') })
    expect(await runCli(['eval', '--synthetic', '--out', dir, '--threshold', '2'], {})).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("option '--threshold <t>' argument '2' is invalid. it must be a number from 0 to 1"),
    })
  })
})
