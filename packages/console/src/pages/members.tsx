// A project's members: the list (paged by the service), a search by name prefix or id (on the
// service too), creating one, erasing one (crypto-shredding its templates) after a confirmation
// that names it.
import { useState } from 'preact/hooks'
import { api, call } from '../api'
import { ConfirmButton, Field, NameForm, Pager, ProblemView, useAction, useLoad, when } from '../components'

const PER_PAGE = 20

export function MembersPage({ projectId }: { projectId: string }) {
  const path = { params: { path: { project_id: projectId } } }
  const [page, setPage] = useState(1)
  const [typed, setTyped] = useState('')
  const [search, setSearch] = useState('')
  // Paged and searched by the service: a project may hold a million members.
  const members = useLoad(
    () =>
      call(
        api.GET('/v1/projects/{project_id}/members', {
          params: { path: { project_id: projectId }, query: { page, per_page: PER_PAGE, ...(search ? { q: search } : {}) } },
        }),
      ),
    [projectId, page, search],
  )
  const find = (text: string) => {
    setTyped(text)
    setSearch(text.trim())
    setPage(1)
  }
  const erase = useAction(members.reload)
  return (
    <>
      <h1>Members</h1>
      <form
        class="filters"
        aria-label="Search members"
        onSubmit={(event) => {
          event.preventDefault()
          find(typed)
        }}
      >
        <Field label="Name begins with, or member id" id="member-search">
          <input id="member-search" type="search" value={typed} maxLength={200} onInput={(event) => setTyped(event.currentTarget.value)} />
        </Field>
        <button type="submit">Search</button>
        {search && (
          <button type="button" onClick={() => find('')}>
            Show all
          </button>
        )}
      </form>
      <ProblemView problem={members.problem} />
      {members.data && (
        <table>
          <caption>
            {search ? `Members whose name begins with “${search}” (or whose id it is), in name order` : 'Members of this project'}, page {page}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Member id</th>
              <th scope="col">Templates</th>
              <th scope="col">Last enrolled</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.data.map((member) => (
              <tr key={member.member_id}>
                <td>{member.display_name}</td>
                <td>
                  <code>{member.member_id}</code>
                </td>
                <td>{member.palm_templates_enrolled}</td>
                <td>{when(member.last_enrolled_at)}</td>
                <td>
                  <ConfirmButton
                    label="Erase…"
                    confirmLabel={`Erase ${member.display_name} and their palms`}
                    onConfirm={() =>
                      void erase.run(
                        call(
                          api.DELETE('/v1/projects/{project_id}/members/{member_id}', {
                            params: { path: { project_id: projectId, member_id: member.member_id } },
                          }),
                        ),
                      )
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="Member pages" page={page} setPage={setPage} last={(members.data?.length ?? 0) < PER_PAGE} />
      <ProblemView problem={erase.problem} />
      <NameForm
        id="member-name"
        heading="New member"
        label="Display name"
        field="/display_name"
        button="Create member"
        send={(name) => call(api.POST('/v1/projects/{project_id}/members', { ...path, body: { display_name: name, metadata: null } }))}
        done={members.reload}
      />
    </>
  )
}
