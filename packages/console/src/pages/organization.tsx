// One organization: its environments (palm template stores) and its projects, and creating each.
import { useState } from 'preact/hooks'
import { api, call, type Schemas } from '../api'
import { Field, fieldError, NameForm, ProblemView, useLoad, useSubmit } from '../components'

function NewProject({ orgId, environments, created }: { orgId: string; environments: Array<{ id: string; name: string }>; created: () => void }) {
  const [name, setName] = useState('')
  const [environmentId, setEnvironmentId] = useState('')
  const [plan, setPlan] = useState<'sandbox' | 'business' | 'enterprise'>('sandbox')
  const { refused, submit } = useSubmit(
    () =>
      call(
        api.POST('/v1/organization/{org_id}/projects', {
          params: { path: { org_id: orgId } },
          body: { name, plan, environment_id: environmentId || environments[0]?.id || null },
        }),
      ),
    () => {
      setName('')
      created()
    },
  )
  return (
    <form onSubmit={submit} aria-labelledby="new-project">
      <h2 id="new-project">New project</h2>
      <Field label="Project name" id="project-name" error={fieldError(refused, '/name')}>
        <input id="project-name" value={name} onInput={(event) => setName(event.currentTarget.value)} required />
      </Field>
      <Field label="Environment" id="project-env" error={fieldError(refused, '/environment_id')}>
        <select id="project-env" value={environmentId} onChange={(event) => setEnvironmentId(event.currentTarget.value)}>
          {environments.map((environment) => (
            <option key={environment.id} value={environment.id}>
              {environment.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Plan" id="project-plan" error={fieldError(refused, '/plan')}>
        <select id="project-plan" value={plan} onChange={(event) => setPlan(event.currentTarget.value as typeof plan)}>
          <option value="sandbox">sandbox</option>
          <option value="business">business</option>
          <option value="enterprise">enterprise</option>
        </select>
      </Field>
      <ProblemView problem={refused} />
      <button type="submit" disabled={environments.length === 0}>
        Create project
      </button>
    </form>
  )
}

function EnvironmentsTable({ orgId, environments }: { orgId: string; environments: Schemas['Environment'][] }) {
  return (
    <table>
      <caption>Environments owned by this organization (a name opens its accuracy)</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Kind</th>
          <th scope="col">Dimension</th>
          <th scope="col">Match threshold</th>
          <th scope="col">Margin</th>
        </tr>
      </thead>
      <tbody>
        {environments.map((environment) => (
          <tr key={environment.id}>
            <td>
              <a href={`#/orgs/${orgId}/environments/${environment.id}/accuracy`}>{environment.name}</a>
            </td>
            <td>{environment.kind}</td>
            <td>{environment.dimension}</td>
            <td>{environment.match_threshold}</td>
            <td>{environment.margin}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function ProjectsTable({
  orgId,
  projects,
  environmentName,
}: {
  orgId: string
  projects: Schemas['Project'][]
  environmentName: (id: string | null) => string
}) {
  return (
    <table>
      <caption>Projects of this organization</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Plan</th>
          <th scope="col">Environment</th>
        </tr>
      </thead>
      <tbody>
        {projects.map((project) => (
          <tr key={project.id}>
            <td>
              <a href={`#/orgs/${orgId}/projects/${project.id}/keys`}>{project.name}</a>
            </td>
            <td>{project.plan.name}</td>
            <td>{environmentName(project.environment_id)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export function OrganizationPage({ orgId }: { orgId: string }) {
  const path = { params: { path: { org_id: orgId } } }
  const environments = useLoad(() => call(api.GET('/v1/organization/{org_id}/environments', path)), [orgId])
  const projects = useLoad(() => call(api.GET('/v1/organization/{org_id}/projects', path)), [orgId])
  const environmentName = (id: string | null) => environments.data?.find((environment) => environment.id === id)?.name ?? '—'
  return (
    <>
      <p>
        <a href="#/">← Organizations</a>
      </p>
      <h1>Organization</h1>
      <nav aria-label="Organization" class="tabs">
        <a href={`#/orgs/${orgId}/audit`}>Audit trail</a>
      </nav>
      <section aria-labelledby="environments">
        <h2 id="environments">Environments</h2>
        <ProblemView problem={environments.problem} />
        {environments.data && <EnvironmentsTable orgId={orgId} environments={environments.data} />}
        <NameForm
          id="env-name"
          heading="New environment"
          label="Environment name"
          field="/name"
          button="Create environment"
          send={(name) => call(api.POST('/v1/organization/{org_id}/environments', { ...path, body: { name } }))}
          done={environments.reload}
        />
      </section>
      <section aria-labelledby="projects">
        <h2 id="projects">Projects</h2>
        <ProblemView problem={projects.problem} />
        {projects.data && <ProjectsTable orgId={orgId} projects={projects.data} environmentName={environmentName} />}
        <NewProject orgId={orgId} environments={environments.data ?? []} created={projects.reload} />
      </section>
    </>
  )
}
