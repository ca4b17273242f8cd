// An environment's accuracy: the threshold in use and how it was derived, the estimated FPIR at
// today's gallery size, the plot of the calibration's fitted curve, its FNIR and DET curve, and the
// target FPIR to change.
import { useEffect, useState } from 'preact/hooks'
import { api, call, type Schemas } from '../api'
import { Field, fieldError, ProblemView, useLoad, useSubmit, when } from '../components'
import { DetChart } from '../det-chart'
import { FpirChart } from '../fpir-chart'

const STATUS = {
  fixed: 'Fixed threshold: no target FPIR, the match threshold is set by hand.',
  pending: 'Calibration pending: the match threshold serves until the service calibrates for the current settings.',
  calibrated: 'Calibrated: the match threshold was derived from the target FPIR.',
}

const rate = (value: { rate: number; low: number; high: number } | null) =>
  value ? `${value.rate.toExponential(2)} (95 % interval ${value.low.toExponential(2)} to ${value.high.toExponential(2)})` : '—'

function TargetForm({ orgId, accuracy, changed }: { orgId: string; accuracy: Schemas['EnvironmentAccuracy']; changed: () => void }) {
  const [target, setTarget] = useState(accuracy.target_fpir === null ? '' : String(accuracy.target_fpir))
  const path = { org_id: orgId, environment_id: accuracy.environment_id }
  const { refused, submit } = useSubmit(
    () =>
      call(
        api.PATCH('/v1/organization/{org_id}/environments/{environment_id}', {
          params: { path },
          body: { target_fpir: target.trim() === '' ? null : Number(target) },
        }),
      ),
    changed,
  )
  return (
    <form onSubmit={submit} aria-labelledby="target-heading">
      <h2 id="target-heading">Change the target</h2>
      <p>The service derives the match threshold so that the FPIR at the gallery's size stays at most this. Empty: a fixed threshold.</p>
      <Field label="Target FPIR (e.g. 0.001)" id="target-fpir" error={fieldError(refused, '/target_fpir')}>
        <input id="target-fpir" inputMode="decimal" value={target} onInput={(event) => setTarget(event.currentTarget.value)} />
      </Field>
      <ProblemView problem={refused} />
      <button type="submit">Save target</button>
    </form>
  )
}

export function AccuracyPage({ orgId, environmentId }: { orgId: string; environmentId: string }) {
  const accuracy = useLoad(
    () =>
      call(api.GET('/v1/organization/{org_id}/environments/{environment_id}/accuracy', { params: { path: { org_id: orgId, environment_id: environmentId } } })),
    [orgId, environmentId],
  )
  const data = accuracy.data
  // A new target is calibrated by the service within moments: ask again every 2 s until it is.
  useEffect(() => {
    if (data?.status !== 'pending') return
    const timer = setTimeout(accuracy.reload, 2000)
    return () => clearTimeout(timer)
  }, [data])
  const calibration = data?.calibration
  return (
    <>
      <p>
        <a href={`#/orgs/${orgId}`}>← Organization</a>
      </p>
      <h1>Accuracy</h1>
      <ProblemView problem={accuracy.problem} />
      {data && (
        <>
          <p data-testid="accuracy-status" role="status">
            {STATUS[data.status]}
          </p>
          <dl class="facts">
            <dt>Match threshold</dt>
            <dd data-testid="accuracy-threshold">{data.match_threshold}</dd>
            <dt>Target FPIR</dt>
            <dd>{data.target_fpir ?? '—'}</dd>
            <dt>Lowest threshold calibration may set</dt>
            <dd>{data.min_match_threshold}</dd>
            <dt>Gallery size (references)</dt>
            <dd data-testid="accuracy-gallery">{data.gallery_size}</dd>
            <dt>Estimated FPIR now</dt>
            <dd data-testid="accuracy-fpir">{rate(data.estimated_fpir)}</dd>
            <dt>Next calibration at a gallery of</dt>
            <dd>{data.recalibrates_at ? `${data.recalibrates_at.at_most} or fewer, ${data.recalibrates_at.at_least} or more` : '—'}</dd>
          </dl>
          <section aria-labelledby="curve-heading">
            <h2 id="curve-heading">FPIR by threshold</h2>
            <FpirChart accuracy={data} />
          </section>
          {calibration && (
            <section aria-labelledby="calibration-heading">
              <h2 id="calibration-heading">Last calibration</h2>
              <dl class="facts">
                <dt>Computed</dt>
                <dd>{when(calibration.computed_at)}</dd>
                <dt>Method</dt>
                <dd data-testid="calibration-method">{calibration.method}</dd>
                <dt>For target FPIR</dt>
                <dd>{calibration.target_fpir}</dd>
                <dt>Threshold</dt>
                <dd>
                  {calibration.threshold}
                  {calibration.floor_applied ? ` (the floor; derived ${calibration.derived_threshold})` : ''}
                </dd>
                <dt>Gallery size then</dt>
                <dd>{calibration.gallery_size}</dd>
                <dt>Non-mated samples</dt>
                <dd>
                  {calibration.non_mated_samples}, {calibration.exceedances} at or above the threshold
                </dd>
                <dt>Estimated FPIR then</dt>
                <dd>{rate(calibration.estimated_fpir)}</dd>
                <dt>FNIR at the threshold</dt>
                <dd data-testid="accuracy-fnir">
                  {rate(calibration.fnir)}
                  {calibration.mated_samples === null ? '' : ` from ${calibration.mated_samples} mated samples (same-session captures: a floor)`}
                </dd>
              </dl>
            </section>
          )}
          {calibration && (
            <section aria-labelledby="det-heading">
              <h2 id="det-heading">DET curve</h2>
              <p>Each sampled identify capture searched for its own member (FNIR) and for the best other member (FPIR), at the calibration's gallery size.</p>
              <DetChart calibration={calibration} threshold={calibration.threshold} />
            </section>
          )}
          <TargetForm key={`${data.target_fpir}`} orgId={orgId} accuracy={data} changed={accuracy.reload} />
        </>
      )}
    </>
  )
}
