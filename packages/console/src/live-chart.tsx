// A time-series chart that takes new data as it comes (uPlot's setData, no redraw from scratch):
// the operations page's traffic and latency. Its description for screen readers is the latest value
// of each line, since the canvas says nothing.
import { useEffect, useRef, useState } from 'preact/hooks'
import type uPlot from 'uplot'
import { PlotFailed } from './lazy-plot'
import { loadUplot } from './uplot-loader'

export interface Line {
  label: string
  stroke: string
  dash?: number[]
  values: Array<number | null>
}

const dataOf = (times: number[], lines: Line[]) => [times, ...lines.map((line) => line.values)] as uPlot.AlignedData

const latest = (values: Array<number | null>) => [...values].reverse().find((value) => value !== null) ?? null

export function LiveChart({ title, unit, times, lines, testId }: { title: string; unit: string; times: number[]; lines: Line[]; testId: string }) {
  const target = useRef<HTMLDivElement>(null)
  const chart = useRef<uPlot | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  const shape = lines.map((line) => line.label).join('\n')
  // A new set of lines (a node joined or left) builds a new chart; new points only update it.
  useEffect(() => {
    let current = true
    void loadUplot().then(
      (UPlot) => {
        if (!current || !target.current) return
        chart.current = new UPlot(
          {
            width: Math.min(760, target.current.clientWidth || 760),
            height: 220,
            scales: { x: { time: true } },
            legend: { show: false },
            axes: [{ stroke: 'currentColor' }, { label: unit, stroke: 'currentColor', size: 60 }],
            series: [{}, ...lines.map((line) => ({ label: line.label, stroke: line.stroke, width: 2, dash: line.dash, spanGaps: true }))],
          },
          dataOf(times, lines),
          target.current,
        )
      },
      (error: unknown) => setFailed(String(error)),
    )
    return () => {
      current = false
      chart.current?.destroy()
      chart.current = null
    }
  }, [shape])
  useEffect(() => {
    chart.current?.setData(dataOf(times, lines))
  }, [times, lines])
  if (failed) return <PlotFailed failed={failed} />
  const described = lines.map((line) => `${line.label}: ${latest(line.values) ?? 'none'}`).join('; ')
  return (
    <figure class="chart">
      <div ref={target} role="img" aria-label={`${title}, latest (${unit}): ${described}`} data-testid={testId} />
      <figcaption>
        {title}:{' '}
        {lines.map((line) => (
          <span key={line.label} class={line.dash ? 'key dashed' : 'key'} style={{ '--key': line.stroke }}>
            {line.label}{' '}
          </span>
        ))}
      </figcaption>
    </figure>
  )
}
