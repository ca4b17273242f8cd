// An organization's audit trail: the records of a time window (paged by the service, newest
// first) filtered by project, actor and action; whether they verify; and the NDJSON export of the
// same selection. The service checks every page it answers against the organization's signed hash
// chain and refuses one it cannot vouch for (audit_trail_broken): that answer is the status shown.
import { useState } from 'preact/hooks'
import { api, call, problemOf, type Problem, type Schemas } from '../api'
import { Field, Pager, ProblemView, TimeWindowFields, useLoad, useTimeWindow, when } from '../components'

const PER_PAGE = 50

interface Filters {
  project_id: string
  actor_id: string
  action: string
}
const NO_FILTERS: Filters = { project_id: '', actor_id: '', action: '' }
/** Only the filters that were given: the API takes an absent parameter as "any". */
const given = (filters: Filters) =>
  Object.fromEntries(
    Object.entries(filters)
      .filter(([, value]) => value.trim() !== '')
      .map(([key, value]) => [key, value.trim()]),
  )

function VerifyStatus({ problem, total }: { problem: Problem | null; total: number | null }) {
  if (problem?.code === 'audit_trail_broken') {
    return (
      <p class="verify broken" role="status" data-testid="audit-verify">
        <strong>The audit trail fails verification.</strong> {problem.detail}
      </p>
    )
  }
  if (total === null) return null
  return (
    <p class="verify" role="status" data-testid="audit-verify">
      <strong>Verified.</strong> The service checked these records against the organization's signed hash chain before showing them.
    </p>
  )
}

/**
 * Saves the NDJSON export of a selection. It needs the bearer token, which a plain link cannot
 * carry: fetched, then saved from memory. Answers the problem when the export was refused.
 */
async function downloadExport(orgId: string, window: { from: string; to: string }, filters: Filters): Promise<Problem | null> {
  const { data, error, response } = await api
    .GET('/v1/organization/{org_id}/audit-log/export', {
      params: { path: { org_id: orgId }, query: { ...window, ...given(filters) } },
      parseAs: 'blob',
    })
    .catch((failure: unknown) => ({ data: undefined, error: failure, response: undefined }))
  if (!response?.ok || !data) return problemOf(error)
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'audit.ndjson'
  const link = Object.assign(document.createElement('a'), { href: URL.createObjectURL(data as Blob), download: name })
  link.click()
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000)
  return null
}

function AuditTable({
  records,
  total,
  page,
  projectName,
}: {
  records: Schemas['AuditRecord'][]
  total: number
  page: number
  projectName: (id: string | null) => string
}) {
  return (
    <table>
      <caption>
        {total} {total === 1 ? 'record' : 'records'} in the window, newest first, page {page}
      </caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Recorded</th>
          <th scope="col">Actor</th>
          <th scope="col">Action</th>
          <th scope="col">Project</th>
          <th scope="col">Status</th>
          <th scope="col">Request</th>
        </tr>
      </thead>
      <tbody>
        {records.map((record) => (
          <tr key={record.seq}>
            <td>{record.seq}</td>
            <td>{when(record.created_at)}</td>
            <td>
              {record.actor_kind}
              {record.actor_id ? `: ${record.actor_id}` : ''}
            </td>
            <td>
              <code data-testid="audit-action">{record.action}</code>
            </td>
            <td>{projectName(record.project_id)}</td>
            <td>{record.status}</td>
            <td>
              <code>{record.request_id}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export function AuditPage({ orgId }: { orgId: string }) {
  const orgPath = { path: { org_id: orgId } }
  const projects = useLoad(() => call(api.GET('/v1/organization/{org_id}/projects', { params: orgPath })), [orgId])
  const range = useTimeWindow()
  const [editing, setEditing] = useState<Filters>(NO_FILTERS)
  const [filters, setFilters] = useState<Filters>(NO_FILTERS)
  const [page, setPage] = useState(1)
  const [loads, setLoads] = useState(0)
  const records = useLoad(
    () =>
      call(
        api.GET('/v1/organization/{org_id}/audit-log', {
          params: { ...orgPath, query: { ...range.query(), ...given(filters), page, per_page: PER_PAGE } },
        }),
      ),
    [orgId, page, loads],
  )
  const [exportProblem, setExportProblem] = useState<Problem | null>(null)
  const show = (event: Event) => {
    event.preventDefault()
    setFilters(editing)
    setPage(1)
    setLoads(loads + 1)
  }
  const download = async () => setExportProblem(await downloadExport(orgId, range.query(), filters))
  const set = (key: keyof Filters) => (event: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setEditing({ ...editing, [key]: event.currentTarget.value })
  const total = records.data?.total_count ?? null
  const projectName = (id: string | null) => (id ? (projects.data?.find((project) => project.id === id)?.name ?? id) : '—')
  return (
    <>
      <p>
        <a href={`#/orgs/${orgId}`}>← Organization</a>
      </p>
      <h1>Audit trail</h1>
      <form class="filters" onSubmit={show} aria-label="Audit filters">
        <TimeWindowFields id="audit" noun="Recorded" window={range} />
        <Field label="Project" id="audit-project">
          <select id="audit-project" value={editing.project_id} onChange={set('project_id')}>
            <option value="">any</option>
            {projects.data?.map((project) => (
              <option key={project.id} value={project.id}>
                {project.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Actor" id="audit-actor">
          <input id="audit-actor" value={editing.actor_id} onInput={set('actor_id')} placeholder="subject, API key id or device id" />
        </Field>
        <Field label="Action" id="audit-action">
          <input id="audit-action" value={editing.action} onInput={set('action')} placeholder="POST /v1/projects/{project_id}/members" />
        </Field>
        <button type="submit">Show records</button>
        <button type="button" onClick={() => void download()}>
          Export NDJSON
        </button>
      </form>
      <ProblemView problem={exportProblem} />
      <VerifyStatus problem={records.problem} total={records.problem ? null : total} />
      {records.problem?.code !== 'audit_trail_broken' && <ProblemView problem={records.problem} />}
      {records.data && !records.problem && <AuditTable records={records.data.items} total={total ?? 0} page={page} projectName={projectName} />}
      <Pager label="Audit pages" page={page} setPage={setPage} last={total === null || page * PER_PAGE >= total} />
    </>
  )
}
