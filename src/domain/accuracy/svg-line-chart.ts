// A line chart rendered to an SVG string in Node: d3-scale for the axes and ticks, d3-shape for
// the paths, no DOM. Series of (x, y) points on log or linear axes, an optional dashed target
// line, a legend. `palmvein eval` draws its DET, score and CMC charts with it, and `npm run
// bench` its latency and throughput charts.
import { scaleLinear, scaleLog } from 'd3-scale'
import { line } from 'd3-shape'

export interface ChartSeries {
  name: string
  points: Array<{ x: number; y: number }>
  /** Default: the next colour of the palette. */
  colour?: string
}

export interface ChartAxis {
  label: string
  /** 'log' suits gallery sizes, client counts and error rates. */
  scale: 'log' | 'linear'
  /** Default: the points' range (a linear y axis starts at 0, with 10 % headroom). */
  domain?: [number, number]
  /** Default: the measured values on a log x axis, else round values the scale picks. */
  ticks?: number[]
  /** Tick label of a value (default: compact number). */
  format?: (value: number) => string
}

export interface LineChartOptions {
  title: string
  x: ChartAxis
  y: ChartAxis
  series: ChartSeries[]
  /** A dashed horizontal line, e.g. the p95 target. */
  target?: { y: number; label: string }
  /** A circle on every point, with its value as a tooltip (default true; off for dense curves). */
  markers?: boolean
  width?: number
  height?: number
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b']
const MARGIN = { top: 40, bottom: 52, left: 64 }
/** Room right of the plot for the legend: its line, then about 7 px a character. */
const legendWidth = (names: string[]) => Math.max(150, 50 + 7 * Math.max(0, ...names.map((name) => name.length)))

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

export function compactNumber(value: number): string {
  if (value >= 1e6 && value % 1e5 === 0) return `${value / 1e6}M`
  if (value >= 1e3 && value % 100 === 0) return `${value / 1e3}k`
  return String(Number(value.toPrecision(3)))
}

const round = (value: number) => Math.round(value * 10) / 10

/** The axis's scale over `length` pixels, and its ticks. */
function scaleOf(axis: ChartAxis, values: number[], length: number, horizontal: boolean) {
  const shown = axis.scale === 'log' ? values.filter((value) => value > 0) : values
  let [low, high] = axis.domain ?? [shown.length ? Math.min(...shown) : 1, shown.length ? Math.max(...shown) : 10]
  const range = horizontal ? [0, length] : [length, 0]
  if (!axis.domain && !horizontal && axis.scale === 'linear') {
    const scale = scaleLinear()
      .domain([0, high * 1.1 || 1])
      .range(range)
      .nice()
    return { scale, ticks: axis.ticks ?? scale.ticks(6) }
  }
  if (low === high) [low, high] = axis.scale === 'log' ? [low / 2, high * 2] : [low - 1, high + 1]
  const scale =
    axis.scale === 'log'
      ? scaleLog()
          .domain([Math.max(low, 1e-12), high])
          .range(range)
      : scaleLinear().domain([low, high]).range(range)
  // A given domain may cut a curve: it runs along the edge instead of leaving the plot.
  scale.clamp(axis.domain !== undefined)
  // Log axes label only the values measured: d3's log ticks (2, 3, 4 … 20, 30) clutter.
  const ticks = axis.ticks ?? (axis.scale === 'log' ? [...new Set(shown)].sort((a, b) => a - b) : scale.ticks(6))
  return { scale, ticks }
}

export function renderLineChart(options: LineChartOptions): string {
  const width = options.width ?? 640
  const height = options.height ?? 360
  const plotWidth = width - MARGIN.left - legendWidth(options.series.map((entry) => entry.name))
  const plotHeight = height - MARGIN.top - MARGIN.bottom
  const visible = (point: { x: number; y: number }) =>
    Number.isFinite(point.x) && Number.isFinite(point.y) && (options.x.scale === 'linear' || point.x > 0) && (options.y.scale === 'linear' || point.y > 0)
  const series = options.series.map((entry) => ({ ...entry, points: entry.points.filter(visible).sort((a, b) => a.x - b.x) }))
  const points = series.flatMap((entry) => entry.points)
  const x = scaleOf(
    options.x,
    points.map((point) => point.x),
    plotWidth,
    true,
  )
  const y = scaleOf(options.y, points.map((point) => point.y).concat(options.target ? [options.target.y] : []), plotHeight, false)
  const formatX = options.x.format ?? compactNumber
  const formatY = options.y.format ?? String
  const parts: string[] = []
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
  )
  parts.push(`<title>${escapeXml(options.title)}</title>`)
  parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`)
  parts.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`)
  parts.push(`<g transform="translate(${MARGIN.left},${MARGIN.top})">`)

  for (const tick of y.ticks) {
    const ty = round(y.scale(tick))
    parts.push(`<line x1="0" x2="${plotWidth}" y1="${ty}" y2="${ty}" stroke="#e5e5e5"/>`)
    parts.push(`<text x="-8" y="${ty}" text-anchor="end" dominant-baseline="middle">${escapeXml(formatY(tick))}</text>`)
  }
  for (const tick of x.ticks) {
    const tx = round(x.scale(tick))
    parts.push(`<line x1="${tx}" x2="${tx}" y1="${plotHeight}" y2="${plotHeight + 5}" stroke="#333333"/>`)
    parts.push(`<text x="${tx}" y="${plotHeight + 18}" text-anchor="middle">${escapeXml(formatX(tick))}</text>`)
  }
  parts.push(`<line x1="0" x2="${plotWidth}" y1="${plotHeight}" y2="${plotHeight}" stroke="#333333"/>`)
  parts.push(`<line x1="0" x2="0" y1="0" y2="${plotHeight}" stroke="#333333"/>`)
  parts.push(`<text x="${plotWidth / 2}" y="${plotHeight + 40}" text-anchor="middle">${escapeXml(options.x.label)}</text>`)
  parts.push(`<text transform="translate(-48,${plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.y.label)}</text>`)

  if (options.target) {
    const ty = round(y.scale(options.target.y))
    parts.push(`<line x1="0" x2="${plotWidth}" y1="${ty}" y2="${ty}" stroke="#555555" stroke-dasharray="6 4"/>`)
    parts.push(`<text x="${plotWidth - 4}" y="${ty - 6}" text-anchor="end" fill="#555555">${escapeXml(options.target.label)}</text>`)
  }

  const path = line<{ x: number; y: number }>()
    .x((point) => round(x.scale(point.x)))
    .y((point) => round(y.scale(point.y)))
  series.forEach((entry, index) => {
    const colour = entry.colour ?? COLOURS[index % COLOURS.length]
    const ly = 8 + index * 20
    parts.push(`<line x1="${plotWidth + 16}" x2="${plotWidth + 36}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`)
    parts.push(`<text x="${plotWidth + 42}" y="${ly}" dominant-baseline="middle">${escapeXml(entry.name)}</text>`)
    if (entry.points.length === 0) return
    parts.push(`<path d="${path(entry.points) ?? ''}" fill="none" stroke="${colour}" stroke-width="2"/>`)
    if (options.markers === false) return
    for (const point of entry.points) {
      const title = escapeXml(`${entry.name}: ${formatX(point.x)} → ${Number(point.y.toPrecision(4))}`)
      parts.push(`<circle cx="${round(x.scale(point.x))}" cy="${round(y.scale(point.y))}" r="3.5" fill="${colour}"><title>${title}</title></circle>`)
    }
  })
  parts.push('</g>')
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}
