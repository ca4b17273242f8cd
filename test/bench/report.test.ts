// The benchmark report writer, run on a small recorded result: the files it writes, the Markdown
// tables (values, ratios, met / missed), and that every SVG chart is well-formed XML.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseCpuInfo } from '../../bench/report/machine.js'
import type { BenchResult } from '../../bench/report/result.js'
import { CHART_FILES } from '../../bench/report/markdown.js'
import { renderLineChart } from '../../src/domain/accuracy/svg-line-chart.js'
import { checkTargets } from '../../bench/report/targets.js'
import { REPORT_FILE, RESULT_FILE, resultDirectoryName, writeReport } from '../../bench/report/write-report.js'
import { checkWellFormedXml } from './xml-well-formed.js'

const fixture = JSON.parse(fs.readFileSync(new URL('../../bench/fixtures/bench-result.json', import.meta.url), 'utf8')) as BenchResult
const directories: string[] = []

function written(result: BenchResult): { directory: string; files: string[]; markdown: string } {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-report-'))
  directories.push(directory)
  const files = writeReport(directory, result)
  return { directory, files, markdown: fs.readFileSync(path.join(directory, REPORT_FILE), 'utf8') }
}

/** The rows of the Markdown table whose header row starts with `firstHeader`, as cell arrays. */
function tableAfter(markdown: string, firstHeader: string): string[][] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.startsWith(`| ${firstHeader} |`))
  expect(start, `no table starting with "${firstHeader}" in:\n${markdown}`).toBeGreaterThanOrEqual(0)
  expect(lines[start + 1]).toMatch(/^\|(-{3}:?|-{3,}:)(\|(-{3}:?|-{3,}:))*\|$/)
  const rows: string[][] = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    rows.push(line.slice(2, -2).split(' | '))
  }
  return rows
}

/** The recorded result with its largest environment relabelled as the 1M-member one the targets are about. */
function atOneMillion(result: BenchResult, change: (environment: BenchResult['environments'][number]) => void): BenchResult {
  const copy = structuredClone(result)
  const largest = copy.environments.reduce((a, b) => (a.members >= b.members ? a : b))
  largest.members = 1_000_000
  largest.galleryRows = 2_000_000
  change(largest)
  return copy
}

/** The environment's 1-client run, once per search mode, with these p95s (p50 half of each). */
function byMode(environment: BenchResult['environments'][number], p95: { exact: number; two_stage: number }) {
  const single = environment.identify.find((load) => load.concurrency === 1)!
  return (['exact', 'two_stage'] as const).map((mode) => ({ ...single, mode, p95: p95[mode], p50: p95[mode] / 2, errors: 0 }))
}

afterAll(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true })
})

describe('bench report writer', () => {
  it('writes the JSON result, the Markdown report and three charts', () => {
    const { directory, files } = written(fixture)
    expect(files.map((file) => path.basename(file)).sort()).toEqual([REPORT_FILE, RESULT_FILE, ...Object.values(CHART_FILES)].sort())
    expect(JSON.parse(fs.readFileSync(path.join(directory, RESULT_FILE), 'utf8'))).toEqual(fixture)
  })

  it("reports each environment's accuracy pass with its DET chart, and says when a run has none", () => {
    expect(written(fixture).markdown).toContain('No accuracy pass in this run.')
    const withAccuracy = structuredClone(fixture)
    const environment = withAccuracy.environments[0]
    const rate = (errors: number, trials: number) => ({ errors, trials, rate: errors / trials, low: 0, high: 1 })
    environment.accuracy = {
      matedProbes: 500,
      nonMatedProbes: 500,
      threshold: 0.8,
      atThreshold: { fnir: rate(20, 500), fpir: rate(0, 500) },
      points: [
        { target_fpir: 3e-3, threshold: 0.662, fpir: rate(1, 500), fnir: rate(4, 500) },
        { target_fpir: 1e-4, threshold: null, fpir: null, fnir: null, note: 'not measurable with 500 non-mated probes (needs 10000)' },
      ],
      eer: { threshold: 0.61, rate: 0.004 },
      det: [
        { threshold: 0.5, fpir: 0.02, fnir: 0.002 },
        { threshold: 0.7, fpir: 0.002, fnir: 0.01 },
      ],
      misses: { total: 20, hard: 18, related: 1, other: 1 },
    }
    const { directory, files, markdown } = written(withAccuracy)
    const [row] = tableAfter(markdown.slice(markdown.indexOf('## Accuracy')), 'members')
    expect(row[0]).toBe(environment.members.toLocaleString('en-US'))
    expect(row[3]).toMatch(/^0\.8 % .* \(T = 0\.662\)$/)
    expect(row[4]).toBe('not measurable with 500 non-mated probes (needs 10000)')
    expect(row[6]).toBe('20: 18 hard, 1 look-alike, 1 other')
    const chart = `det-${environment.members}.svg`
    expect(files.map((file) => path.basename(file))).toContain(chart)
    expect(checkWellFormedXml(fs.readFileSync(path.join(directory, chart), 'utf8'))[0]).toBe('svg')
    expect(markdown).toContain("The service's calibration for a target FPIR was not measured")
  })

  it("reports the service's calibration against the probes' FPIR at its threshold", () => {
    const withCalibration = structuredClone(fixture)
    const rate = (errors: number, trials: number) => ({ errors, trials, rate: errors / trials, low: 0, high: 1 })
    withCalibration.environments[0].accuracy = {
      matedProbes: 500,
      nonMatedProbes: 500,
      threshold: 0.8,
      atThreshold: { fnir: rate(20, 500), fpir: rate(0, 500) },
      points: [],
      eer: null,
      det: [],
      misses: { total: 0, hard: 0, related: 0, other: 0 },
      calibration: {
        targetFpir: 3e-3,
        threshold: 0.6543,
        method: 'extreme_value',
        samples: 2000,
        estimatedFpir: { rate: 3e-3, low: 1.5e-3, high: 5.1e-3 },
        seconds: 4.2,
        measuredFpir: rate(1, 500),
        fnir: rate(9, 500),
        probesThreshold: 0.641,
      },
    }
    const { markdown } = written(withCalibration)
    const [row] = tableAfter(markdown.slice(markdown.indexOf("The service's own calibration")), 'members')
    expect(row.slice(1)).toEqual([
      '0.654 (extreme-value, 2,000 samples, 4.2 s)',
      '0.30 % [0.15 %, 0.51 %]',
      expect.stringContaining('(1 / 500)'),
      expect.stringContaining('(9 / 500)'),
      '0.641',
    ])
  })

  it("reports the console's main bundle and first load against issue #51's targets, and says when they were not measured", () => {
    expect(written(fixture).markdown).toContain('## Console\n\nNot measured in this run.')
    const skipped = { ...structuredClone(fixture), console: { skipped: 'no Chromium at /usr/bin/chromium' } }
    expect(written(skipped).markdown).toContain('Not measured: no Chromium at /usr/bin/chromium.')
    const files = [
      { name: 'index.html', bytes: 506, gzipBytes: 300 },
      { name: 'assets/index-a.js', bytes: 83_099, gzipBytes: 26_440 },
      { name: 'assets/index-b.css', bytes: 3_608, gzipBytes: 1_328 },
    ]
    const measured = { ...structuredClone(fixture), console: { files, mainGzipBytes: 28_068, firstLoadMs: [993, 578, 622, 647, 1196], firstLoadMedianMs: 647 } }
    const { markdown } = written(measured)
    expect(tableAfter(markdown, 'file')).toEqual([
      ['index.html', '0.5 KiB', '0.3 KiB'],
      ['assets/index-a.js', '81.2 KiB', '25.8 KiB'],
      ['assets/index-b.css', '3.5 KiB', '1.3 KiB'],
      ['main bundle, in all', '85.2 KiB', '27.4 KiB'],
    ])
    expect(markdown).toContain('median 647 ms over 5 loads (993, 578, 622, 647, 1196 ms)')
    expect(markdown).toContain('Main bundle under 200.0 KiB gzip: **met**. First load under 1000 ms (median): **met**.')
    const slow = { ...measured, console: { ...measured.console, mainGzipBytes: 300_000, firstLoadMedianMs: 1_200 } }
    expect(written(slow).markdown).toContain('Main bundle under 200.0 KiB gzip: **missed**. First load under 1000 ms (median): **missed**.')
  })

  it('puts the machine, the matcher backend and every identify run in the report', () => {
    const { markdown } = written(fixture)
    const machine = Object.fromEntries(tableAfter(markdown, '').map(([key, value]) => [key, value]))
    expect(machine.CPU).toBe(fixture.machine.cpuModel)
    expect(machine.SIMD).toBe(fixture.machine.simd.join(', '))
    expect(machine.Node).toBe(fixture.machine.node)
    expect(machine.matcher).toBe(`${fixture.machine.matcher!.backend} (${fixture.machine.matcher!.isa})`)

    const rows = tableAfter(markdown, 'members')
    const runs = fixture.environments.flatMap((environment) => environment.identify.map((load) => ({ environment, load })))
    expect(rows).toHaveLength(runs.length)
    const smallest = fixture.environments.reduce((a, b) => (a.members <= b.members ? a : b))
    runs.forEach(({ environment, load }, index) => {
      const [members, clients, throughput, p50, p95, p99, errors, scaling, growth] = rows[index]
      expect(members).toBe(environment.members.toLocaleString('en-US'))
      expect(Number(clients)).toBe(load.concurrency)
      expect(Number(throughput)).toBeCloseTo(load.throughput, 0)
      expect(Number(p50)).toBeCloseTo(load.p50, 1)
      expect(Number(p95)).toBeCloseTo(load.p95, 1)
      expect(Number(p99)).toBeCloseTo(load.p99, 1)
      expect(Number(errors)).toBe(load.errors)
      const single = environment.identify.find((other) => other.concurrency === 1)!
      expect(scaling).toBe(`${(load.throughput / single.throughput).toFixed(2)}×`)
      const base = smallest.identify.find((other) => other.concurrency === load.concurrency)!
      expect(growth).toBe(environment === smallest ? '' : `${(load.p95 / base.p95).toFixed(2)}×`)
    })
  })

  it('shows FAISS ratios in the matcher table, and says when FAISS was not measured', () => {
    const base = fixture.matcher.rows!.find((row) => row.engine.startsWith('native:'))!
    const withFaiss: BenchResult = {
      ...fixture,
      matcher: {
        ...fixture.matcher,
        rows: [
          { ...base, vsFaiss: 1.23 },
          { ...base, engine: 'faiss:sq8', vsFaiss: undefined },
        ],
      },
    }
    const { markdown } = written(withFaiss)
    const rows = tableAfter(markdown, 'rows')
    const faissColumn =
      markdown
        .split('\n')
        .find((line) => line.startsWith('| rows |'))!
        .split('|')
        .map((cell) => cell.trim())
        .indexOf('× faiss') - 1
    expect(faissColumn).toBeGreaterThan(0)
    expect(rows.map((row) => row[faissColumn])).toEqual(['1.23×', ''])
    expect(markdown).not.toContain('FAISS was not measured')
    expect(written(fixture).markdown).toContain('FAISS was not measured in this run')
  })

  it('says "not measured" for the 1M-member targets when the run has no 1M environment', () => {
    const { markdown } = written(fixture)
    const targets = tableAfter(markdown, 'target')
    expect(targets).toHaveLength(7)
    for (const index of [0, 1, 3, 4, 5, 6]) expect(targets[index][2]).toContain('not measured')
    expect(targets[5][1]).toBe('not measured: no 10,000,000-member environment in this run')
    // The recorded quick run (a busy 2-core machine, embedded database) did not keep up with 1 000 GETs/s.
    const worst = Math.max(...fixture.environments.flatMap((environment) => environment.rest.map((load) => load.p95)))
    expect(worst).toBeGreaterThan(5)
    expect(targets[2][1]).toContain(`worst p95 ${worst.toFixed(1)} ms`)
    expect(targets[2][2]).toBe('❌ missed')
  })

  it('marks each target met or missed beside the figure it judges', () => {
    // 2M rows x 256 = 512 MB of int8 rows: 1.25 x 512 + 300 = 940 MB = 896.5 MiB allowed.
    const met = atOneMillion(fixture, (environment) => {
      environment.identify = environment.identify.map((load) => ({ ...load, p95: load.concurrency === 1 ? 40 : 90, throughput: 450 }))
      environment.identifyByMode = byMode(environment, { exact: 30, two_stage: 15 })
      environment.serviceRssMiB = 896
    })
    for (const environment of met.environments) environment.rest = environment.rest.map((load) => ({ ...load, p95: 2, errors: 0, throughput: load.targetRate }))
    expect(checkTargets(met).map((check) => check.verdict)).toEqual(['met', 'met', 'met', 'met', 'met', 'not measured', 'met'])
    expect(checkTargets(met)[3].measured).toBe('1,000,000 members: 896 MiB of 896 MiB allowed')
    const rows = tableAfter(written(met).markdown, 'members').filter((row) => row[0] === '1,000,000')
    expect(rows.map((row) => row[9])).toEqual(['✅ met (p95 < 50 ms)', '✅ met (≥ 200/s, p95 < 100 ms)', ''])

    const missed = atOneMillion(fixture, (environment) => {
      environment.identify = environment.identify.map((load) => ({ ...load, p95: load.concurrency === 1 ? 50 : 120, throughput: 150 }))
      environment.identifyByMode = byMode(environment, { exact: 30, two_stage: 15.1 })
      environment.rest = environment.rest.map((load) => ({ ...load, p95: 7.5 }))
      environment.serviceRssMiB = 897
    })
    expect(checkTargets(missed).map((check) => check.verdict)).toEqual(['missed', 'missed', 'missed', 'missed', 'missed', 'not measured', 'missed'])
    const missedMarkdown = written(missed).markdown
    expect(tableAfter(missedMarkdown, 'target').map((row) => row[2])).toEqual([
      '❌ missed',
      '❌ missed',
      '❌ missed',
      '❌ missed',
      '❌ missed',
      '— not measured',
      '❌ missed',
    ])
    expect(
      tableAfter(missedMarkdown, 'members')
        .filter((row) => row[0] === '1,000,000')
        .map((row) => row[9].split(' (')[0]),
    ).toEqual(['❌ missed', '❌ missed', ''])
  })

  it('shows the 1-client runs per search mode with how much faster two-stage answered, and says when a run has none', () => {
    expect(written(fixture).markdown).toContain('No runs per search mode in this result.')
    const result = atOneMillion(fixture, (environment) => {
      environment.identifyByMode = byMode(environment, { exact: 30, two_stage: 12 })
    })
    const rows = tableAfter(written(result).markdown, 'search mode')
    // p50 is half the p95 in `byMode`: exact 15 ms, two-stage 6 ms.
    expect(rows).toEqual([
      ['exact', '1,000,000', expect.any(String), '15.0', '30.0', expect.any(String), '0', ''],
      ['two_stage', '1,000,000', expect.any(String), '6.00', '12.0', expect.any(String), '0', '2.50×'],
    ])
  })

  it('judges a REST run that did not reach its rate as missed, however fast its answers', () => {
    const fast = structuredClone(fixture)
    for (const environment of fast.environments)
      environment.rest = environment.rest.map((load) => ({ ...load, p95: 1.5, errors: 0, throughput: load.targetRate }))
    expect(checkTargets(fast)[2].verdict).toBe('met')
    fast.environments[0].rest[0].throughput = 600
    expect(checkTargets(fast)[2].verdict).toBe('missed')
  })

  it('draws every chart as well-formed SVG with one point per measured run', () => {
    const { directory } = written(fixture)
    const runs = fixture.environments.reduce((sum, environment) => sum + environment.identify.length, 0)
    for (const name of Object.values(CHART_FILES)) {
      const svg = fs.readFileSync(path.join(directory, name), 'utf8')
      let elements: string[] = []
      expect(() => {
        elements = checkWellFormedXml(svg)
      }, `${name}:\n${svg}`).not.toThrow()
      expect(elements[0]).toBe('svg')
      expect(elements.filter((element) => element === 'circle')).toHaveLength(runs)
      expect(elements.filter((element) => element === 'path').length).toBeGreaterThan(0)
    }
  })

  it('escapes text so labels cannot break the SVG', () => {
    const svg = renderLineChart({
      title: 'a < b & "c"',
      x: { label: '<x>', scale: 'linear' },
      y: { label: 'y & z', scale: 'linear' },
      series: [
        {
          name: '</svg><script>',
          points: [
            { x: 1, y: 2 },
            { x: 2, y: 3 },
          ],
        },
      ],
      target: { y: 2.5, label: 'R&D' },
    })
    const elements = checkWellFormedXml(svg)
    expect(elements).not.toContain('script')
    expect(svg).toContain('&lt;/svg&gt;&lt;script&gt;')
  })
})

describe('the XML well-formedness check', () => {
  it.each([
    ['<svg><g></svg>', /closes <g>/],
    ['<svg></svg><svg></svg>', /second root/],
    ['<svg a="1" a="2"/>', /duplicate attribute/],
    ['<svg a=1/>', /unquoted/],
    ['<svg><text>a < b</text></svg>', /tag without a valid name|bare "<"/],
    ['<svg><text>R&D</text></svg>', /bare "&"/],
    ['<svg><g>', /unclosed <g>/],
    ['text<svg/>', /outside the root/],
    ['<svg x="1"y="2"/>', /not separated/],
  ])('refuses %s', (xml, message) => {
    expect(() => checkWellFormedXml(xml)).toThrow(message)
  })

  it('accepts entities, comments and self-closing tags', () => {
    expect(checkWellFormedXml('<?xml version="1.0"?>\n<!-- c --><svg a="&amp;&#38;"><title>1 &lt; 2</title><g/></svg>\n')).toEqual(['svg', 'title', 'g'])
  })
})

describe('machine info', () => {
  it('reads the model, physical cores and SIMD flags from /proc/cpuinfo', () => {
    const block = (processor: number, core: number) =>
      `processor\t: ${processor}\nmodel name\t: Test CPU @ 3.0GHz\nphysical id\t: 0\ncore id\t\t: ${core}\ncpu cores\t: 2\nflags\t\t: fpu sse4_2 avx avx2 avx512f avx512_vnni\n`
    const parsed = parseCpuInfo([block(0, 0), block(1, 0), block(2, 1), block(3, 1)].join('\n'))
    expect(parsed).toEqual({ model: 'Test CPU @ 3.0GHz', physicalCores: 2, simd: ['sse4_2', 'avx', 'avx2', 'avx512f', 'avx512_vnni'] })
    expect(parseCpuInfo('processor\t: 0\nFeatures\t: fp asimd asimddp\nCPU part\t: 0xd0c\n').simd).toEqual(['asimd', 'asimddp'])
  })

  it('names result directories so they sort by time', () => {
    expect(resultDirectoryName(new Date('2026-05-01T12:30:05.123Z'))).toBe('2026-05-01T12-30-05Z')
  })
})
