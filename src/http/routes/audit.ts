// The audit trail of an organization (spec "What the service does", item 2: "Access is logged"):
// a filtered page, newest first, and the NDJSON export of a window, oldest first.
import { auditWindowProblem } from '../../domain/audit/audit-verify.js'
import { ServiceError } from '../../errors.js'
import { auditPage, auditRowsAfter, type AuditFilter } from '../../store/audit-log.js'
import { auditResource, AuditRecordSchema } from '../resources/audit.js'
import { defineRoute, StreamReply, type Route } from '../route.js'
import { Pagination, parseWindow, PathIds, requireOrderedWindow, TimeWindow, Text, Type, Uuid } from '../schema.js'

const tags = ['Audit']
const EXPORT_PAGE = 2_000
const Filters = {
  project_id: Type.Optional(Uuid('only records of this project')),
  actor_id: Type.Optional(Text({ minLength: 1, maxLength: 256, description: 'only records of this actor (token subject, API key id or device id)' })),
  action: Type.Optional(Text({ minLength: 1, maxLength: 256, description: 'only this action, e.g. DELETE /v1/projects/{project_id}/members/{member_id}' })),
}

function filterOf(orgId: string, query: { from: string; to: string; project_id?: string; actor_id?: string; action?: string }): AuditFilter {
  return { orgId, ...parseWindow(query), projectId: query.project_id, actorId: query.actor_id, action: query.action }
}

export const auditRoutes: Route[] = [
  defineRoute({
    operationId: 'listAuditLog',
    method: 'get',
    path: '/v1/organization/:org_id/audit-log',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary:
      "The organization's audit records created in [from, to], newest first, one page: every request of its API keys and terminals, and every request its admins' tokens were granted, with the outcome",
    params: PathIds('org_id'),
    query: Type.Object({ ...TimeWindow, ...Pagination(1_000), ...Filters }, { additionalProperties: false }),
    checkInput: requireOrderedWindow,
    responses: [
      {
        status: 200,
        description: 'a page of records and how many match',
        schema: Type.Object({ items: Type.Array(AuditRecordSchema), total_count: Type.Integer({ minimum: 0 }) }),
      },
    ],
    async handler(context) {
      const { query, params, app } = context
      const filter = filterOf(params.org_id, query)
      const { items, total } = await auditPage(app.sql, filter, query.page, query.per_page)
      // A page that could hide or misstate records is refused rather than shown.
      const broken = await auditWindowProblem(app.sql, app.audit.keys, filter, items)
      if (broken)
        throw new ServiceError('audit_trail_broken', `record ${broken.seq} of this organization's audit trail: ${broken.reason}; run palmvein audit verify`)
      return { items: items.map(auditResource), total_count: total }
    },
  }),
  defineRoute({
    operationId: 'exportAuditLog',
    method: 'get',
    path: '/v1/organization/:org_id/audit-log/export',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary: 'The same records as the list for [from, to] (and filters), oldest first, as NDJSON: one record per line (streamed)',
    params: PathIds('org_id'),
    query: Type.Object({ ...TimeWindow, ...Filters }, { additionalProperties: false }),
    checkInput: requireOrderedWindow,
    responses: [{ status: 200, description: 'application/x-ndjson file', contentType: 'application/x-ndjson' }],
    async handler(context) {
      const { query, params, app } = context
      const filter = filterOf(params.org_id, query)
      async function* lines() {
        for (let after = 0; ; ) {
          const page = await auditRowsAfter(app.sql, filter, after, EXPORT_PAGE)
          if (page.length > 0) yield page.map((row) => JSON.stringify(auditResource(row)) + '\n').join('')
          if (page.length < EXPORT_PAGE) return
          after = page[page.length - 1].seq
        }
      }
      const name = `audit-${params.org_id}-${filter.from.toISOString().slice(0, 10)}-${filter.to.toISOString().slice(0, 10)}.ndjson`
      return new StreamReply(200, lines(), 'application/x-ndjson', { 'Content-Disposition': `attachment; filename="${name}"` })
    },
  }),
]
