// A small line chart rendered to an SVG string in Node: d3-scale for the axes and ticks, d3-shape
// for the paths, no DOM. One job: series of (x, y) points, a log or linear x axis, an optional
// horizontal target line, a legend. The report draws its three charts with it.
import { scaleLinear, scaleLog } from 'd3-scale'
import { line } from 'd3-shape'

export interface ChartSeries {
  name: string
  points: Array<{ x: number; y: number }>
}

export interface LineChartOptions {
  title: string
  xLabel: string
  yLabel: string
  series: ChartSeries[]
  /** 'log' suits gallery sizes and client counts (powers of ten / sixteen). */
  xScale: 'log' | 'linear'
  /** A dashed horizontal line, e.g. the p95 target. */
  target?: { y: number; label: string }
  /** Tick label of an x value (default: compact number). */
  formatX?: (value: number) => string
  width?: number
  height?: number
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b']
const MARGIN = { top: 40, right: 150, bottom: 52, left: 64 }

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

export function compactNumber(value: number): string {
  if (value >= 1e6 && value % 1e5 === 0) return `${value / 1e6}M`
  if (value >= 1e3 && value % 100 === 0) return `${value / 1e3}k`
  return String(Number(value.toPrecision(3)))
}

const round = (value: number) => Math.round(value * 10) / 10

export function renderLineChart(options: LineChartOptions): string {
  const width = options.width ?? 640
  const height = options.height ?? 360
  const plotWidth = width - MARGIN.left - MARGIN.right
  const plotHeight = height - MARGIN.top - MARGIN.bottom
  const points = options.series.flatMap((series) => series.points).filter((point) => Number.isFinite(point.x) && Number.isFinite(point.y))
  const xs = points.map((point) => point.x)
  const ys = points.map((point) => point.y).concat(options.target ? [options.target.y] : [])
  const formatX = options.formatX ?? compactNumber

  let xMin = xs.length ? Math.min(...xs) : 1
  let xMax = xs.length ? Math.max(...xs) : 10
  if (xMin === xMax) { xMin = options.xScale === 'log' ? xMin / 2 : xMin - 1; xMax = options.xScale === 'log' ? xMax * 2 : xMax + 1 }
  const x = options.xScale === 'log'
    ? scaleLog().domain([Math.max(xMin, 1e-9), xMax]).range([0, plotWidth])
    : scaleLinear().domain([xMin, xMax]).range([0, plotWidth])
  const y = scaleLinear().domain([0, ys.length ? Math.max(...ys) * 1.1 || 1 : 1]).range([plotHeight, 0]).nice()

  // Log axes label only the values we measured: d3's log ticks (2, 3, 4 … 20, 30) clutter.
  const xTicks = options.xScale === 'log' ? [...new Set(xs)].sort((a, b) => a - b) : x.ticks(6)
  const yTicks = y.ticks(6)
  const parts: string[] = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`)
  parts.push(`<title>${escapeXml(options.title)}</title>`)
  parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`)
  parts.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`)
  parts.push(`<g transform="translate(${MARGIN.left},${MARGIN.top})">`)

  for (const tick of yTicks) {
    const ty = round(y(tick))
    parts.push(`<line x1="0" x2="${plotWidth}" y1="${ty}" y2="${ty}" stroke="#e5e5e5"/>`)
    parts.push(`<text x="-8" y="${ty}" text-anchor="end" dominant-baseline="middle">${escapeXml(String(tick))}</text>`)
  }
  for (const tick of xTicks) {
    const tx = round(x(tick))
    parts.push(`<line x1="${tx}" x2="${tx}" y1="${plotHeight}" y2="${plotHeight + 5}" stroke="#333333"/>`)
    parts.push(`<text x="${tx}" y="${plotHeight + 18}" text-anchor="middle">${escapeXml(formatX(tick))}</text>`)
  }
  parts.push(`<line x1="0" x2="${plotWidth}" y1="${plotHeight}" y2="${plotHeight}" stroke="#333333"/>`)
  parts.push(`<line x1="0" x2="0" y1="0" y2="${plotHeight}" stroke="#333333"/>`)
  parts.push(`<text x="${plotWidth / 2}" y="${plotHeight + 40}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`)
  parts.push(`<text transform="translate(-48,${plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.yLabel)}</text>`)

  if (options.target) {
    const ty = round(y(options.target.y))
    parts.push(`<line x1="0" x2="${plotWidth}" y1="${ty}" y2="${ty}" stroke="#555555" stroke-dasharray="6 4"/>`)
    parts.push(`<text x="${plotWidth - 4}" y="${ty - 6}" text-anchor="end" fill="#555555">${escapeXml(options.target.label)}</text>`)
  }

  const path = line<{ x: number; y: number }>().x((point) => round(x(point.x))).y((point) => round(y(point.y)))
  options.series.forEach((series, index) => {
    const colour = COLOURS[index % COLOURS.length]
    const sorted = series.points.filter((point) => Number.isFinite(point.x) && Number.isFinite(point.y)).sort((a, b) => a.x - b.x)
    if (sorted.length === 0) return
    parts.push(`<path d="${path(sorted) ?? ''}" fill="none" stroke="${colour}" stroke-width="2"/>`)
    for (const point of sorted) {
      parts.push(`<circle cx="${round(x(point.x))}" cy="${round(y(point.y))}" r="3.5" fill="${colour}"><title>${escapeXml(`${series.name}: ${formatX(point.x)} → ${Number(point.y.toPrecision(4))}`)}</title></circle>`)
    }
    const ly = 8 + index * 20
    parts.push(`<line x1="${plotWidth + 16}" x2="${plotWidth + 36}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`)
    parts.push(`<text x="${plotWidth + 42}" y="${ly}" dominant-baseline="middle">${escapeXml(series.name)}</text>`)
  })
  parts.push('</g>')
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}
