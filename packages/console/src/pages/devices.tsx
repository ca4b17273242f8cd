// A project's terminals: the list (paged by the service) with mode, platform, state and last use,
// and linking a registered terminal with the registration code it shows (sandbox projects only).
import { useState } from 'preact/hooks'
import { api, call, type Schemas } from '../api'
import { Field, fieldError, Pager, ProblemView, SelectField, useLoad, useSubmit, when } from '../components'

export const DEVICE_MODES = ['access', 'payment', 'enrollment', 'demo'] as const
type Mode = Schemas['Device']['mode']
const PER_PAGE = 20

function LinkTerminal({ projectId, linked }: { projectId: string; linked: () => void }) {
  const [code, setCode] = useState('')
  const [name, setName] = useState('')
  const [mode, setMode] = useState<Mode>('enrollment')
  const { refused, submit } = useSubmit(
    () =>
      call(
        api.POST('/v1/projects/{project_id}/device/android/complete_registration', {
          params: { path: { project_id: projectId } },
          body: { registration_code: code, device_name: name, device_mode: mode },
        }),
      ),
    () => {
      setCode('')
      setName('')
      linked()
    },
  )
  return (
    <form onSubmit={submit} aria-labelledby="link-terminal">
      <h2 id="link-terminal">Link a terminal</h2>
      <p>
        A terminal registers itself (<code>POST /v1/device-com/registration</code>) and shows an 8-character registration code, valid 15 minutes. Only sandbox
        projects link terminals this way.
      </p>
      <Field label="Registration code" id="terminal-code" error={fieldError(refused, '/registration_code')}>
        <input id="terminal-code" value={code} onInput={(event) => setCode(event.currentTarget.value)} required autocomplete="off" />
      </Field>
      <Field label="Device name" id="terminal-name" error={fieldError(refused, '/device_name')}>
        <input id="terminal-name" value={name} onInput={(event) => setName(event.currentTarget.value)} required />
      </Field>
      <SelectField
        label="Mode"
        id="terminal-mode"
        value={mode}
        options={DEVICE_MODES}
        error={fieldError(refused, '/device_mode')}
        onChange={(value) => setMode(value as Mode)}
      />
      <ProblemView problem={refused} />
      <button type="submit">Link terminal</button>
    </form>
  )
}

export function DevicesPage({ orgId, projectId }: { orgId: string; projectId: string }) {
  const [page, setPage] = useState(1)
  const devices = useLoad(
    () => call(api.GET('/v1/projects/{project_id}/devices', { params: { path: { project_id: projectId }, query: { page, per_page: PER_PAGE } } })),
    [projectId, page],
  )
  const total = devices.data?.total ?? 0
  return (
    <>
      <h1>Devices</h1>
      <ProblemView problem={devices.problem} />
      {devices.data &&
        (devices.data.devices.length === 0 && page === 1 ? (
          <p>No terminal linked to this project yet.</p>
        ) : (
          <table>
            <caption>
              {total} {total === 1 ? 'terminal' : 'terminals'} of this project, oldest first, page {page}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mode</th>
                <th scope="col">Platform</th>
                <th scope="col">State</th>
                <th scope="col">Last authenticated</th>
                <th scope="col">Last activity</th>
              </tr>
            </thead>
            <tbody>
              {devices.data.devices.map((device) => (
                <tr key={device.id}>
                  <td>
                    <a href={`#/orgs/${orgId}/projects/${projectId}/devices/${device.id}`}>{device.name ?? device.id}</a>
                  </td>
                  <td>{device.mode}</td>
                  <td>{device.hardware_platform}</td>
                  <td>{device.enabled ? 'enabled' : 'disabled'}</td>
                  <td>{when(device.last_auth_at)}</td>
                  <td>{when(device.last_activity_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      <Pager label="Device pages" page={page} setPage={setPage} last={page * PER_PAGE >= total} />
      <LinkTerminal projectId={projectId} linked={devices.reload} />
    </>
  )
}
