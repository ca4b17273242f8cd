// Members of a project (spec "Members"): the person whose palms are enrolled. Each member gets its
// own data key at creation (wrapped by the environment key); deleting the member deletes that key
// with the row, which makes every copy of its encrypted templates unreadable (crypto-shredding), and
// the erasure ledger keeps a restored backup from bringing it back (erasures.ts). Scans and
// transactions keep the member id as plain history.
import type postgres from 'postgres'
import type { DomainResources } from '../resources.js'
import { ServiceError, notFound } from '../../errors.js'
import { isUuid, newId } from '../../ids.js'
import type { Sql } from '../../store/engine/database.js'
import { lockEnvironmentGallery } from '../../store/gallery-changes.js'
import { insertMemberWithinHeadcount, memberById, membersOfProject, searchMembers, updateMember, type MemberRow } from '../../store/members.js'
import { environmentById } from '../../store/organizations.js'
import type { ProjectRow } from '../../store/projects.js'
import { eraseMemberRow } from './erasures.js'
import { newMemberKey } from '../../keys/template-crypto.js'

/** Metadata is any JSON value; its JSON text is capped so one member cannot bloat the table. */
export const MAX_METADATA_BYTES = 16 * 1024

export function checkMetadata(metadata: unknown): postgres.JSONValue | null {
  if (metadata === undefined || metadata === null) return null
  const text = JSON.stringify(metadata)
  if (Buffer.byteLength(text) > MAX_METADATA_BYTES) {
    throw new ServiceError('invalid_request', `metadata is ${Buffer.byteLength(text)} bytes of JSON; at most ${MAX_METADATA_BYTES} are allowed`, {
      errors: [{ path: '/metadata', message: `must be at most ${MAX_METADATA_BYTES} bytes of JSON` }],
    })
  }
  return metadata as postgres.JSONValue
}

export async function createMember(
  app: Pick<DomainResources, 'keyring' | 'sql'>,
  project: ProjectRow,
  input: { display_name: string; metadata?: unknown },
): Promise<MemberRow> {
  const metadata = checkMetadata(input.metadata)
  const environment = await environmentById(app.sql, project.environment_id!)
  if (!environment) throw notFound('environment')
  const id = newId()
  const { wrapped } = newMemberKey(app.keyring, environment, id)
  const row = await insertMemberWithinHeadcount(app.sql, {
    id,
    project_id: project.id,
    environment_id: environment.id,
    display_name: input.display_name,
    metadata,
    wrapped_key: wrapped,
  })
  if (!row) throw new ServiceError('headcount_reached', `project ${project.id} already has ${project.headcount} members, the ${project.plan} plan's headcount`)
  return row
}

export async function loadMember(app: Pick<DomainResources, 'sql'>, project: ProjectRow, memberId: string): Promise<MemberRow> {
  const row = await memberById(app.sql, project.id, memberId)
  if (!row) throw notFound('member')
  return row
}

/** PUT: the fields sent replace the stored ones; a field left out keeps its value. */
export async function changeMember(
  app: Pick<DomainResources, 'sql'>,
  project: ProjectRow,
  memberId: string,
  input: { display_name?: string; metadata?: unknown },
): Promise<MemberRow> {
  if (input.display_name === undefined && !('metadata' in input)) {
    throw new ServiceError('invalid_request', 'send display_name, metadata or both', { errors: [{ path: '/', message: 'needs display_name or metadata' }] })
  }
  const changes: { display_name?: string; metadata?: postgres.JSONValue | null } = { display_name: input.display_name }
  if ('metadata' in input) changes.metadata = checkMetadata(input.metadata)
  const row = await updateMember(app.sql, project.id, memberId, changes)
  if (!row) throw notFound('member')
  return row
}

/**
 * Deletes the member (its key and templates with it), records the erasure in the ledger no backup
 * holds (erasures.ts), and takes it out of every gallery.
 */
export async function removeMember(app: Pick<DomainResources, 'config' | 'galleries' | 'log' | 'sql'>, project: ProjectRow, memberId: string): Promise<void> {
  const deleted = await app.sql.begin(async (tx) => {
    // Locked before the row (as enrollment does), so a delete and an enrollment cannot deadlock.
    if (project.environment_id) await lockEnvironmentGallery(tx, project.environment_id)
    return eraseMemberRow(tx, app.config, project.id, memberId, project.environment_id)
  })
  if (!deleted) throw notFound('member')
  app.galleries.removeMember(deleted.environment_id, memberId)
  await app.galleries.announce(deleted.environment_id, memberId).catch((error) => app.log.warn({ err: error }, 'member delete: gallery notification failed'))
}

/** The project's members, oldest first: all of them, or one page (`page` from 1). */
export function listMembers(sql: Sql, project: Pick<ProjectRow, 'id'>, page?: { page: number; perPage: number }, search?: string): Promise<MemberRow[]> {
  const range = page && { offset: (page.page - 1) * page.perPage, limit: page.perPage }
  if (search === undefined || !range) return membersOfProject(sql, project.id, range)
  // A member id finds that member; any text finds the names it begins.
  return searchMembers(sql, project.id, { prefix: search, memberId: isUuid(search) ? search.toLowerCase() : null }, range)
}
