// palmvein eval through the CLI: a synthetic set and the same set as a template file give the same
// report; the report has the ISO/IEC 19795-1 figures and the charts; bad input is refused by line.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { syntheticTemplateSet } from '../../src/accuracy/synthetic-set.js'
import { runCli } from '../support/process.js'

describe('palmvein eval', () => {
  let dir: string
  beforeAll(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-eval-')) })
  afterAll(async () => { await fs.rm(dir, { recursive: true, force: true }) })
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
    await fs.writeFile(file, [...syntheticTemplateSet({ enrolled: 150, unenrolled: 150, seed: 7, dimension: 256 })].map((line) => JSON.stringify(line)).join('\n') + '\n')
    const fromFile = path.join(dir, 'file')
    expect((await runCli(['eval', '--templates', file, '--fpir', '0.01,0.001', '--out', fromFile], {})).code).toBe(0)
    expect(await read(fromFile)).toEqual(report)
  })

  it('refuses bad input by line number, and bad usage, with exit code 2', async () => {
    const file = path.join(dir, 'bad.ndjson')
    const good = [...syntheticTemplateSet({ enrolled: 1, unenrolled: 0, seed: 1, dimension: 256 })].slice(0, 2).map((line) => JSON.stringify(line))
    await fs.writeFile(file, [...good, JSON.stringify({ subject: 's', hand: 'left', role: 'probe', capture: 'not-a-capture' })].join('\n'))
    expect(await runCli(['eval', '--templates', file, '--out', path.join(dir, 'bad')], {})).toMatchObject({ code: 2, stderr: expect.stringContaining('line 3: capture:') })
    expect(await runCli(['eval', '--synthetic', '--templates', file, '--out', dir], {})).toMatchObject({ code: 2, stderr: expect.stringContaining('either --templates') })
    expect(await runCli(['eval', '--synthetic'], {})).toMatchObject({ code: 2, stderr: expect.stringContaining('--out') })
    expect(await runCli(['eval', '--synthetic', '--out', dir, '--threshold', '2'], {})).toMatchObject({ code: 2, stderr: expect.stringContaining('--threshold must be a number from 0 to 1') })
  })
})
