// The organizations the signed-in user administers, and creating one (the creator becomes its admin).
import { api, call } from '../api'
import { NameForm, ProblemView, useLoad, when } from '../components'

export function OrganizationsPage() {
  const { data, problem, reload } = useLoad(() => call(api.GET('/v1/organizations')), [])
  return (
    <>
      <h1>Organizations</h1>
      <ProblemView problem={problem} />
      {data &&
        (data.length === 0 ? (
          <p>You administer no organization yet: create one.</p>
        ) : (
          <table>
            <caption>Organizations you administer</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.map((org) => (
                <tr key={org.id}>
                  <td>
                    <a href={`#/orgs/${org.id}`}>{org.name}</a>
                  </td>
                  <td>{org.kind}</td>
                  <td>{when(org.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      <NameForm
        id="org-name"
        heading="New organization"
        label="Name"
        field="/name"
        button="Create organization"
        send={(name) => call(api.POST('/v1/organizations', { body: { name } }))}
        done={(org) => {
          location.hash = `#/orgs/${org.id}`
        }}
      />
      <button type="button" class="link" onClick={reload}>
        Refresh
      </button>
    </>
  )
}
