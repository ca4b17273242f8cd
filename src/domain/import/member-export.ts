// Export of a tenant-managed environment's members with their palms (`palmvein export`): the
// import's line format, captures decrypted, so importing an export reproduces the members. Members
// whose captures were never stored (references only, from before the benchmark used the import)
// are exported without hands and counted: their palms cannot be re-enrolled from a reference alone.
import type { DomainResources } from '../resources.js'
import { ServiceError } from '../../errors.js'
import { membersPageWithKeys } from '../../store/members.js'
import { environmentById } from '../../store/organizations.js'
import type { ProjectRow } from '../../store/projects.js'
import { captureRowsOfMembers, type CaptureRow } from '../../store/templates.js'
import type { EnrollHand } from '../enrollment/enrollment.js'
import { HANDS } from '../galleries/galleries.js'
import type { ImportMember } from './line-batches.js'
import { openSilhouette, openTemplate, unwrapMemberKey } from '../../keys/template-crypto.js'

const PAGE_MEMBERS = 500

export interface ExportCounts {
  members: number
  /** Members exported without hands: no captures stored. */
  withoutCaptures: number
}

/** The project's members in id order, as import lines; `counts` is complete when the iteration ends. */
export async function* exportMembers(
  app: Pick<DomainResources, 'keyring' | 'sql'>,
  project: ProjectRow,
  counts: ExportCounts,
): AsyncGenerator<ImportMember & { member_id: string }> {
  if (!project.environment_id) throw new ServiceError('environment_not_tenant_managed', `project ${project.id} has no environment of its own`)
  const environment = await environmentById(app.sql, project.environment_id)
  if (!environment) throw new ServiceError('not_found', `environment ${project.environment_id} not found`)
  let after: string | null = null
  while (true) {
    const page = await membersPageWithKeys(app.sql, project.id, after, PAGE_MEMBERS)
    if (!page.length) return
    const captures = new Map<string, CaptureRow[]>()
    for (const row of await captureRowsOfMembers(
      app.sql,
      page.map((member) => member.id),
    )) {
      captures.set(row.member_id, [...(captures.get(row.member_id) ?? []), row])
    }
    for (const member of page) {
      const line: ImportMember & { member_id: string } = {
        member_id: member.id,
        display_name: member.display_name,
        ...(member.metadata === null ? {} : { metadata: member.metadata }),
      }
      const rows = captures.get(member.id) ?? []
      const key = rows.length && member.wrapped_key ? unwrapMemberKey(app.keyring, environment, member.id, member.wrapped_key) : null
      for (const hand of HANDS) {
        const enroll = rows.find((row) => row.hand === hand && row.kind === 'enroll')
        const identify = rows.find((row) => row.hand === hand && row.kind === 'identify')
        if (!key || !enroll || !identify) continue
        const output: EnrollHand = {
          enroll_capture: openTemplate(key, member.id, hand, 'enroll', enroll.ciphertext).toString('base64url'),
          identify_capture: openTemplate(key, member.id, hand, 'identify', identify.ciphertext).toString('base64url'),
        }
        if (enroll.silhouette) output.silhouette = openSilhouette(key, member.id, hand, enroll.silhouette)
        if (enroll.palm_position) output.palm_position = enroll.palm_position as unknown as EnrollHand['palm_position']
        line[`${hand}_hand`] = output
      }
      counts.members += 1
      if (!line.left_hand && !line.right_hand) counts.withoutCaptures += 1
      yield line
    }
    after = page[page.length - 1].id
  }
}
