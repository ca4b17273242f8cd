// Writes one run to its directory: results.json (the raw result, to re-render or compare later),
// report.md, and the three SVG charts. Pure over its input, so a recorded result re-renders the
// same report (the test does exactly that).
import fs from 'node:fs'
import path from 'node:path'
import { detSvg } from '../../src/domain/accuracy/svg.js'
import { CHART_FILES, detChartFile, renderMarkdown } from './markdown.js'
import type { BenchResult } from './result.js'
import { compactNumber, renderLineChart, type ChartSeries } from '../../src/domain/accuracy/svg-line-chart.js'
import { IDENTIFY_P95_ONE_CLIENT_MS, IDENTIFY_SIXTEEN_CLIENTS } from './targets.js'

export const RESULT_FILE = 'results.json'
export const REPORT_FILE = 'report.md'

const clients = (concurrency: number) => `${concurrency} client${concurrency === 1 ? '' : 's'}`
const members = (count: number) => `${compactNumber(count)} members`

export function renderCharts(result: BenchResult): Record<string, string> {
  const environments = [...result.environments].sort((a, b) => a.members - b.members)
  const concurrencies = [...new Set(environments.flatMap((environment) => environment.identify.map((load) => load.concurrency)))].sort((a, b) => a - b)

  const p95BySize: ChartSeries[] = concurrencies.map((concurrency) => ({
    name: clients(concurrency),
    points: environments.flatMap((environment) =>
      environment.identify.filter((load) => load.concurrency === concurrency && load.requests > 0).map((load) => ({ x: environment.members, y: load.p95 })),
    ),
  }))
  const byConcurrency = (pick: 'p95' | 'throughput'): ChartSeries[] =>
    environments.map((environment) => ({
      name: members(environment.members),
      points: environment.identify.filter((load) => load.requests > 0).map((load) => ({ x: load.concurrency, y: load[pick] })),
    }))

  const detCharts = Object.fromEntries(
    environments
      .filter((environment) => environment.accuracy)
      .map((environment) => [
        detChartFile(environment.members),
        detSvg({
          gallery_size: environment.members,
          det: environment.accuracy!.det,
          mated_probes: environment.accuracy!.matedProbes,
          non_mated_probes: environment.accuracy!.nonMatedProbes,
        }),
      ]),
  )
  return {
    ...detCharts,
    [CHART_FILES.p95BySize]: renderLineChart({
      title: 'Identify p95 latency against gallery size',
      x: { label: 'enrolled members (2 gallery rows each)', scale: 'log' },
      y: { label: 'p95 latency (ms)', scale: 'linear' },
      series: p95BySize,
      target: { y: IDENTIFY_P95_ONE_CLIENT_MS, label: `target at 1M, 1 client: ${IDENTIFY_P95_ONE_CLIENT_MS} ms` },
    }),
    [CHART_FILES.p95ByConcurrency]: renderLineChart({
      title: 'Identify p95 latency against concurrency',
      x: { label: 'concurrent clients', scale: 'log', format: String },
      y: { label: 'p95 latency (ms)', scale: 'linear' },
      series: byConcurrency('p95'),
      target: { y: IDENTIFY_SIXTEEN_CLIENTS.maxP95Ms, label: `target at 1M, 16 clients: ${IDENTIFY_SIXTEEN_CLIENTS.maxP95Ms} ms` },
    }),
    [CHART_FILES.throughputByConcurrency]: renderLineChart({
      title: 'Identify throughput against concurrency',
      x: { label: 'concurrent clients', scale: 'log', format: String },
      y: { label: 'identify requests per second', scale: 'linear' },
      series: byConcurrency('throughput'),
      target: { y: IDENTIFY_SIXTEEN_CLIENTS.minThroughput, label: `target at 1M, 16 clients: ${IDENTIFY_SIXTEEN_CLIENTS.minThroughput}/s` },
    }),
  }
}

/** Writes every file of the report into `directory`; returns their paths. */
export function writeReport(directory: string, result: BenchResult): string[] {
  fs.mkdirSync(directory, { recursive: true })
  const files: Record<string, string> = {
    [RESULT_FILE]: JSON.stringify(result, null, 2) + '\n',
    [REPORT_FILE]: renderMarkdown(result),
    ...renderCharts(result),
  }
  return Object.entries(files).map(([name, content]) => {
    const file = path.join(directory, name)
    fs.writeFileSync(file, content)
    return file
  })
}

/** A directory name that sorts by time and is safe on every file system: 2026-05-01T12-30-05Z. */
export function resultDirectoryName(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-')
}
