// The plot of an environment's accuracy: the FPIR at each threshold at today's gallery size, from
// the calibration's fitted tail (FPIR(T) = samples / non_mated_samples · exp(−(T − start) / scale)
// at the calibration's size, carried to today's as the service does), with the target and the
// threshold in use. uPlot is loaded on first use so the main bundle does not carry it.
import { useEffect, useRef, useState } from 'preact/hooks'
import type { Schemas } from './api'
import { loadUplot } from './uplot-loader'

type Accuracy = Schemas['EnvironmentAccuracy']
type Calibration = NonNullable<Accuracy['calibration']>

/** FPIR at gallery size `to` from its value at `from` (the service's domain/accuracy/extreme-value.ts fpirAtSize). */
const fpirAtSize = (fpir: number, from: number, to: number) =>
  from <= 0 || to === from ? fpir : -Math.expm1((to / from) * Math.log1p(-Math.min(fpir, 1 - 1e-16)))

/** The fitted curve, sampled from the tail's start to 1, with the threshold in use among the points. */
export function fpirCurve(calibration: Calibration, gallerySize: number, threshold: number) {
  const tail = calibration.tail!
  const steps = 80
  const xs = Array.from({ length: steps + 1 }, (_, index) => tail.start + ((1 - tail.start) * index) / steps)
  if (!xs.includes(threshold)) xs.push(threshold)
  xs.sort((a, b) => a - b)
  const fpir = xs.map((x) =>
    fpirAtSize(Math.min(1, (tail.samples / calibration.non_mated_samples) * Math.exp(-(x - tail.start) / tail.scale)), calibration.gallery_size, gallerySize),
  )
  return { xs, fpir }
}

export function FpirChart({ accuracy }: { accuracy: Accuracy }) {
  const target = useRef<HTMLDivElement>(null)
  const [failed, setFailed] = useState<string | null>(null)
  const calibration = accuracy.calibration
  useEffect(() => {
    if (!calibration?.tail || !target.current) return
    const { xs, fpir } = fpirCurve(calibration, accuracy.gallery_size, accuracy.match_threshold)
    const goal = xs.map(() => calibration.target_fpir)
    const inUse = xs.map((x, index) => (x === accuracy.match_threshold ? fpir[index] : null))
    let chart: { destroy(): void } | undefined
    let current = true
    void loadUplot().then(
      (UPlot) => {
        if (!current || !target.current) return
        chart = new UPlot(
          {
            width: Math.min(760, target.current.clientWidth || 760),
            height: 320,
            scales: { x: { time: false }, y: { distr: 3, log: 10 } },
            legend: { show: false },
            axes: [
              { label: 'Match threshold', stroke: 'currentColor' },
              {
                label: 'FPIR',
                stroke: 'currentColor',
                size: 70,
                values: (_chart: unknown, splits: Array<number | null>) => splits.map((value) => (value == null ? '' : value.toExponential(0))),
              },
            ],
            series: [
              {},
              { label: 'FPIR (fitted)', stroke: '#1f6feb', width: 2 },
              { label: 'Target FPIR', stroke: '#b35900', dash: [6, 4] },
              { label: 'Threshold in use', stroke: '#1a7f37', points: { show: true, size: 10, fill: '#1a7f37' }, paths: () => null },
            ],
          },
          [xs, fpir, goal, inUse],
          target.current,
        )
      },
      (error: unknown) => setFailed(String(error)),
    )
    return () => {
      current = false
      chart?.destroy()
    }
  }, [accuracy])
  if (!calibration) return <p>No calibration yet: the plot appears once the service has calibrated the threshold.</p>
  if (!calibration.tail)
    return (
      <p>
        This calibration counted its sample (method <code>empirical</code>): it fitted no curve to plot.
      </p>
    )
  if (failed)
    return (
      <p class="problem" role="alert">
        The chart could not load: {failed}
      </p>
    )
  const label = `FPIR by match threshold at a gallery of ${accuracy.gallery_size}: the fitted curve, the target ${calibration.target_fpir}, and the threshold in use ${accuracy.match_threshold}`
  return (
    <figure class="chart">
      <div ref={target} role="img" aria-label={label} data-testid="fpir-chart" />
      <figcaption>
        <span class="key fitted">FPIR (fitted tail)</span> <span class="key goal">Target FPIR</span> <span class="key in-use">Threshold in use</span>
      </figcaption>
    </figure>
  )
}
