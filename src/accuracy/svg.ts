// The report's charts as plain SVG (no dependency): the DET curve on log axes, the top-1 score
// distributions, and the CMC curve.
import type { AccuracyReport } from './report.js'

const WIDTH = 640
const HEIGHT = 400
const PAD = { left: 64, right: 16, top: 28, bottom: 48 }
const PLOT = { width: WIDTH - PAD.left - PAD.right, height: HEIGHT - PAD.top - PAD.bottom }

interface Axis { min: number; max: number; log: boolean; label: string; ticks: number[]; format: (value: number) => string }

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')

function position(axis: Axis, value: number, length: number): number {
  const [low, high, v] = axis.log ? [Math.log10(axis.min), Math.log10(axis.max), Math.log10(Math.max(value, axis.min))] : [axis.min, axis.max, value]
  return ((v - low) / (high - low)) * length
}

function chart(title: string, x: Axis, y: Axis, series: Array<{ name: string; color: string; points: Array<[number, number]>; steps?: boolean }>): string {
  const px = (value: number) => PAD.left + position(x, value, PLOT.width)
  const py = (value: number) => PAD.top + PLOT.height - position(y, value, PLOT.height)
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="16" text-anchor="middle" font-size="13">${escape(title)}</text>`,
    `<rect x="${PAD.left}" y="${PAD.top}" width="${PLOT.width}" height="${PLOT.height}" fill="none" stroke="#999"/>`,
  ]
  for (const tick of x.ticks) parts.push(`<line x1="${px(tick)}" x2="${px(tick)}" y1="${PAD.top}" y2="${PAD.top + PLOT.height}" stroke="#eee"/><text x="${px(tick)}" y="${PAD.top + PLOT.height + 14}" text-anchor="middle">${x.format(tick)}</text>`)
  for (const tick of y.ticks) parts.push(`<line x1="${PAD.left}" x2="${PAD.left + PLOT.width}" y1="${py(tick)}" y2="${py(tick)}" stroke="#eee"/><text x="${PAD.left - 6}" y="${py(tick) + 4}" text-anchor="end">${y.format(tick)}</text>`)
  parts.push(`<text x="${PAD.left + PLOT.width / 2}" y="${HEIGHT - 10}" text-anchor="middle">${escape(x.label)}</text>`)
  parts.push(`<text transform="translate(14 ${PAD.top + PLOT.height / 2}) rotate(-90)" text-anchor="middle">${escape(y.label)}</text>`)
  series.forEach((line, index) => {
    const path = line.points.map(([a, b], at) => `${at === 0 ? 'M' : 'L'}${px(a).toFixed(1)},${py(b).toFixed(1)}`).join('')
    if (path) parts.push(`<path d="${path}" fill="none" stroke="${line.color}" stroke-width="1.6"/>`)
    parts.push(`<text x="${PAD.left + PLOT.width - 8}" y="${PAD.top + 16 + index * 14}" text-anchor="end" fill="${line.color}">${escape(line.name)}</text>`)
  })
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}

const decades = (low: number) => Array.from({ length: -Math.log10(low) + 1 }, (_, index) => 10 ** -index).reverse()
const scientific = (value: number) => (value >= 0.01 ? String(value) : `1e${Math.round(Math.log10(value))}`)
const percent = (value: number) => `${Math.round(value * 100)} %`

export function detSvg(report: Pick<AccuracyReport, 'gallery_size' | 'det' | 'mated_probes' | 'non_mated_probes'>): string {
  const floor = Math.min(1e-3, 10 ** Math.floor(Math.log10(1 / Math.max(10, report.non_mated_probes, report.mated_probes))))
  const axis = (label: string): Axis => ({ min: floor, max: 1, log: true, label, ticks: decades(floor), format: scientific })
  const points = report.det.filter((point) => point.fpir > 0 && point.fnir > 0).map((point) => [point.fpir, point.fnir] as [number, number])
  return chart(`DET at N = ${report.gallery_size}`, axis('FPIR (false positive identification rate)'), axis('FNIR (false negative identification rate)'),
    [{ name: 'FNIR against FPIR', color: '#1f77b4', points }])
}

export function scoresSvg(report: AccuracyReport): string {
  const { bins, mated_top1: mated, non_mated_top1: nonMated } = report.score_histograms
  const share = (counts: number[]) => { const total = counts.reduce((a, b) => a + b, 0) || 1; return counts.map((count) => count / total) }
  const top = Math.max(...share(mated), ...share(nonMated), 0.01)
  const x: Axis = { min: 0, max: 1, log: false, label: 'top-1 score (cosine)', ticks: [0, 0.2, 0.4, 0.6, 0.8, 1], format: String }
  const y: Axis = { min: 0, max: top, log: false, label: 'share of probes', ticks: [0, top / 2, top], format: percent }
  const line = (counts: number[]) => share(counts).map((value, index) => [bins[index] + 0.5 / bins.length, value] as [number, number])
  return chart('Top-1 score distributions', x, y, [
    { name: 'mated probes', color: '#2ca02c', points: line(mated) },
    { name: 'non-mated probes', color: '#d62728', points: line(nonMated) },
  ])
}

export function cmcSvg(report: AccuracyReport): string {
  const low = Math.max(0, Math.floor(Math.min(...report.cmc.map((entry) => entry.rate)) * 10) / 10 - 0.1)
  const x: Axis = { min: 1, max: report.cmc.length, log: false, label: 'rank', ticks: report.cmc.map((entry) => entry.rank), format: String }
  const y: Axis = { min: low, max: 1, log: false, label: 'identification rate', ticks: [low, (low + 1) / 2, 1], format: percent }
  return chart('CMC (mated probes)', x, y, [{ name: 'rank-k identification rate', color: '#9467bd', points: report.cmc.map((entry) => [entry.rank, entry.rate]) }])
}
