// One terminal: its facts, enabling or disabling it, and enrollment sessions on it with their live
// state. A session starts pending, turns in_progress when the terminal picks it up (Device-Com's
// long poll) and completed when it sends the member's captures; or cancelled, or expired 300 s
// after it began. The page asks the API for the session's state every 2 s while it can still
// change.
import { useEffect, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api'
import { Field, fieldError, ProblemView, useAction, useLoad, useSubmit, when } from '../components'

type Session = Schemas['EnrollmentSession']
const LIVE = new Set(['pending', 'in_progress'])
const POLL_MS = 2_000

/** The session as it is now: asked again every 2 s until it is completed, cancelled or expired. */
function useLiveSession(deviceId: string, started: Session | null) {
  const [session, setSession] = useState<Session | null>(started)
  const [problem, setProblem] = useState<Problem | null>(null)
  useEffect(() => setSession(started), [started])
  useEffect(() => {
    if (!session || !LIVE.has(session.state)) return
    const timer = setTimeout(async () => {
      const result = await call(
        api.POST('/v1/devices/{device_id}/enroll/status', { params: { path: { device_id: deviceId } }, body: { session: { enroll_id: session.enroll_id } } }),
      )
      if ('problem' in result) return setProblem(result.problem)
      setProblem(null)
      // null: a newer session superseded this one on the device.
      setSession(result.data.session ?? { ...session, state: 'cancelled' })
    }, POLL_MS)
    return () => clearTimeout(timer)
  }, [session, deviceId])
  return { session, setSession, problem }
}

function EnrollmentSession({ deviceId, projectId }: { deviceId: string; projectId: string }) {
  // The first 100 members to choose from; the member id field takes any other.
  const members = useLoad(
    () => call(api.GET('/v1/projects/{project_id}/members', { params: { path: { project_id: projectId }, query: { page: 1, per_page: 100 } } })),
    [projectId],
  )
  const [memberId, setMemberId] = useState('')
  const [started, setStarted] = useState<Session | null>(null)
  const live = useLiveSession(deviceId, started)
  const { refused, submit } = useSubmit(
    () => call(api.POST('/v1/devices/{device_id}/enroll/member/start', { params: { path: { device_id: deviceId } }, body: { member_id: memberId } })),
    (answer) => setStarted(answer.session),
  )
  const cancel = useAction(() => {})
  const session = live.session
  const memberName = (id: string) => members.data?.find((member) => member.member_id === id)?.display_name ?? id
  return (
    <section aria-labelledby="enrollment">
      <h2 id="enrollment">Enrollment session</h2>
      <form onSubmit={submit}>
        <Field label="Member to enroll" id="session-member" error={fieldError(refused, '/member_id')}>
          <select id="session-member" value={memberId} onChange={(event) => setMemberId(event.currentTarget.value)} required>
            <option value="">choose a member</option>
            {members.data?.map((member) => (
              <option key={member.member_id} value={member.member_id}>
                {member.display_name}
              </option>
            ))}
          </select>
        </Field>
        <ProblemView problem={refused} />
        <button type="submit">Start enrollment</button>
      </form>
      {session && (
        <div class="once" aria-live="polite">
          <dl class="facts">
            <dt>Session</dt>
            <dd>
              <code>{session.enroll_id}</code>
            </dd>
            <dt>Member</dt>
            <dd>{memberName(session.user_id)}</dd>
            <dt>State</dt>
            <dd>
              <strong data-testid="session-state">{session.state}</strong>
            </dd>
            <dt>Expires</dt>
            <dd>{when(new Date(session.exp * 1000).toISOString())}</dd>
            <dt>Terminal echoed the challenge</dt>
            <dd>{session.terminal_challenge_response ? 'yes' : 'no'}</dd>
          </dl>
          {LIVE.has(session.state) && (
            <button
              type="button"
              onClick={() =>
                void cancel.run(
                  call(
                    api.DELETE('/v1/devices/{device_id}/enroll/cancel', {
                      params: { path: { device_id: deviceId }, query: { session_id: session.enroll_id } },
                    }),
                  ).then((result) => {
                    if ('data' in result) live.setSession(result.data)
                    return result
                  }),
                )
              }
            >
              Cancel session
            </button>
          )}
          <ProblemView problem={cancel.problem ?? live.problem} />
        </div>
      )}
    </section>
  )
}

export function DevicePage({ orgId, projectId, deviceId }: { orgId: string; projectId: string; deviceId: string }) {
  // The API has no single-device read: the device is found in the project's list.
  const devices = useLoad(
    () => call(api.GET('/v1/projects/{project_id}/devices', { params: { path: { project_id: projectId }, query: { page: 1, per_page: 100 } } })),
    [projectId],
  )
  const device = devices.data?.devices.find((each) => each.id === deviceId)
  const toggle = useAction(devices.reload)
  return (
    <>
      <p>
        <a href={`#/orgs/${orgId}/projects/${projectId}/devices`}>← Devices</a>
      </p>
      <h1>Terminal {device?.name ?? ''}</h1>
      <ProblemView problem={devices.problem} />
      {devices.data && !device && <p>This terminal is not among the project's first 100.</p>}
      {device && (
        <>
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{device.id}</code>
            </dd>
            <dt>Mode</dt>
            <dd>{device.mode}</dd>
            <dt>Platform</dt>
            <dd>{device.hardware_platform}</dd>
            <dt>State</dt>
            <dd data-testid="device-state">{device.enabled ? 'enabled' : 'disabled'}</dd>
            <dt>Last authenticated</dt>
            <dd>{when(device.last_auth_at)}</dd>
            <dt>Last activity</dt>
            <dd>{when(device.last_activity_at)}</dd>
          </dl>
          <button
            type="button"
            onClick={() =>
              void toggle.run(call(api.PATCH('/v1/device/{device_id}', { params: { path: { device_id: deviceId } }, body: { enabled: !device.enabled } })))
            }
          >
            {device.enabled ? 'Disable terminal' : 'Enable terminal'}
          </button>
          <ProblemView problem={toggle.problem} />
        </>
      )}
      <EnrollmentSession deviceId={deviceId} projectId={projectId} />
    </>
  )
}
