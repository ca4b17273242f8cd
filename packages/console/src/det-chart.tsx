// The environment's DET curve: FNIR against FPIR over the match threshold, from the calibration
// sample (the service's domain/accuracy/det.ts), on log axes, with the threshold in use marked. A
// rate of 0 cannot sit on a log axis: it is drawn at the axis floor, half a sample, and said so.
import type { Schemas } from './api'
import { logAxis, PlotFailed, useLazyPlot } from './lazy-plot'

type Calibration = NonNullable<Schemas['EnvironmentAccuracy']['calibration']>

/** The curve by ascending FPIR (uPlot's x), zeros raised to the floor, and the threshold in use's point. */
export function detSeries(calibration: Calibration, threshold: number) {
  const floor = 0.5 / Math.max(1, calibration.non_mated_samples, calibration.mated_samples ?? 0)
  const points = [...calibration.det].sort((a, b) => a.fpir - b.fpir || b.fnir - a.fnir)
  const raise = (rate: number) => Math.max(floor, rate)
  return {
    floor,
    fpir: points.map((point) => raise(point.fpir)),
    fnir: points.map((point) => raise(point.fnir)),
    inUse: points.map((point) => (point.threshold === threshold ? raise(point.fnir) : null)),
  }
}

export function DetChart({ calibration, threshold }: { calibration: Calibration; threshold: number }) {
  const series = calibration.det.length > 1 ? detSeries(calibration, threshold) : null
  const { target, failed } = useLazyPlot(
    () => ({
      height: 320,
      scales: { x: { time: false, distr: 3, log: 10 }, y: { distr: 3, log: 10 } },
      legend: { show: false },
      axes: [logAxis('FPIR'), logAxis('FNIR')],
      series: [
        {},
        { label: 'DET', stroke: '#8250df', width: 2 },
        { label: 'Threshold in use', stroke: '#1a7f37', points: { show: true, size: 10, fill: '#1a7f37' }, paths: () => null },
      ],
    }),
    series && [series.fpir, series.fnir, series.inUse],
    [calibration, threshold],
  )
  if (!series) return <p>This calibration kept no mated sample (it predates the DET curve): the next calibration draws it.</p>
  if (failed) return <PlotFailed failed={failed} />
  const label = `DET curve: FNIR against FPIR over ${calibration.det.length} thresholds of the calibration sample, the threshold in use ${threshold} marked`
  return (
    <figure class="chart">
      <div ref={target} role="img" aria-label={label} data-testid="det-chart" />
      <figcaption>
        <span class="key det">DET (FNIR against FPIR)</span> <span class="key in-use">Threshold in use</span>. A rate of 0 is drawn at{' '}
        {series.floor.toExponential(0)}, half a sample.
      </figcaption>
    </figure>
  )
}
