// The report's charts: the DET curve on log axes, the top-1 score distributions, and the CMC curve.
import { renderLineChart, type ChartAxis } from './svg-line-chart.js'
import type { AccuracyReport } from './report.js'

const decades = (low: number) => Array.from({ length: -Math.log10(low) + 1 }, (_, index) => 10 ** -index).reverse()
const scientific = (value: number) => (value >= 0.01 ? String(value) : `1e${Math.round(Math.log10(value))}`)
const percent = (value: number) => `${Math.round(value * 100)} %`

export function detSvg(report: Pick<AccuracyReport, 'gallery_size' | 'det' | 'mated_probes' | 'non_mated_probes'>): string {
  const floor = Math.min(1e-3, 10 ** Math.floor(Math.log10(1 / Math.max(10, report.non_mated_probes, report.mated_probes))))
  const axis = (label: string): ChartAxis => ({ label, scale: 'log', domain: [floor, 1], ticks: decades(floor), format: scientific })
  const points = report.det.filter((point) => point.fpir > 0 && point.fnir > 0).map((point) => ({ x: point.fpir, y: point.fnir }))
  return renderLineChart({
    title: `DET at N = ${report.gallery_size}`,
    x: axis('FPIR (false positive identification rate)'),
    y: axis('FNIR (false negative identification rate)'),
    series: [{ name: 'FNIR against FPIR', points }],
    markers: false,
  })
}

export function scoresSvg(report: AccuracyReport): string {
  const { bins, mated_top1: mated, non_mated_top1: nonMated } = report.score_histograms
  const share = (counts: number[]) => {
    const total = counts.reduce((a, b) => a + b, 0) || 1
    return counts.map((count) => count / total)
  }
  const top = Math.max(...share(mated), ...share(nonMated), 0.01)
  const x: ChartAxis = { label: 'top-1 score (cosine)', scale: 'linear', domain: [0, 1], ticks: [0, 0.2, 0.4, 0.6, 0.8, 1], format: String }
  const y: ChartAxis = { label: 'share of probes', scale: 'linear', domain: [0, top], ticks: [0, top / 2, top], format: percent }
  const points = (counts: number[]) => share(counts).map((value, index) => ({ x: bins[index] + 0.5 / bins.length, y: value }))
  return renderLineChart({
    title: 'Top-1 score distributions',
    x,
    y,
    markers: false,
    series: [
      { name: 'mated probes', colour: '#2ca02c', points: points(mated) },
      { name: 'non-mated probes', colour: '#d62728', points: points(nonMated) },
    ],
  })
}

export function cmcSvg(report: AccuracyReport): string {
  const low = Math.max(0, Math.floor(Math.min(...report.cmc.map((entry) => entry.rate)) * 10) / 10 - 0.1)
  const x: ChartAxis = { label: 'rank', scale: 'linear', domain: [1, report.cmc.length], ticks: report.cmc.map((entry) => entry.rank), format: String }
  const y: ChartAxis = { label: 'identification rate', scale: 'linear', domain: [low, 1], ticks: [low, (low + 1) / 2, 1], format: percent }
  return renderLineChart({
    title: 'CMC (mated probes)',
    x,
    y,
    markers: false,
    series: [{ name: 'rank-k identification rate', colour: '#9467bd', points: report.cmc.map((entry) => ({ x: entry.rank, y: entry.rate })) }],
  })
}
