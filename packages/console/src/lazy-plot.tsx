// A uPlot chart drawn once uPlot has loaded (uplot-loader.ts): the console's fixed plots (fpir-chart,
// det-chart) give their options and data, and get the element to mount and the error to show if
// the chart's code could not load. live-chart.tsx updates its chart in place instead.
import { useEffect, useRef, useState } from 'preact/hooks'
import type uPlot from 'uplot'
import { loadUplot } from './uplot-loader'

export type PlotOptions = Omit<uPlot.Options, 'width'>

/** Mounts a uPlot chart of `options` and `data` in the returned element while `data` is not null. */
export function useLazyPlot(options: () => PlotOptions, data: uPlot.AlignedData | null, deps: unknown[]) {
  const target = useRef<HTMLDivElement>(null)
  const [failed, setFailed] = useState<string | null>(null)
  useEffect(() => {
    if (!data || !target.current) return
    let chart: { destroy(): void } | undefined
    let current = true
    void loadUplot().then(
      (UPlot) => {
        if (!current || !target.current) return
        chart = new UPlot({ ...options(), width: Math.min(760, target.current.clientWidth || 760) }, data, target.current)
      },
      (error: unknown) => setFailed(String(error)),
    )
    return () => {
      current = false
      chart?.destroy()
    }
  }, deps)
  return { target, failed }
}

/** A log-scale axis labelled in powers of ten ("1e-3"). */
export const logAxis = (label: string) => ({
  label,
  stroke: 'currentColor',
  size: 70,
  values: (_chart: unknown, splits: Array<number | null>) => splits.map((value) => (value == null ? '' : value.toExponential(0))),
})

export function PlotFailed({ failed }: { failed: string }) {
  return (
    <p class="problem" role="alert">
      The chart could not load: {failed}
    </p>
  )
}
