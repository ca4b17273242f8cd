// Scan results (spec "Scans, transactions, project"): every identify and enroll, newest first.
import { scansOfProject } from '../../store/scans.js'
import { scanResource, ScanResultSchema } from '../resources/scans.js'
import { defineRoute, type Route } from '../route.js'
import { Pagination, PathIds, requireOrderedWindow, TimeWindow, Type } from '../schema.js'

export const scanRoutes: Route[] = [
  defineRoute({
    method: 'get', path: '/v1/projects/:project_id/scans/results', auth: ['token', 'key'], access: 'project', tags: ['Scans'], rateLimited: true,
    summary: 'Scan results created in [from, to], newest first, one page',
    params: PathIds('project_id'),
    query: Type.Object({ ...TimeWindow, ...Pagination(10_000) }, { additionalProperties: false }),
    checkInput: requireOrderedWindow,
    responses: [{ status: 200, description: 'scan results', schema: Type.Array(ScanResultSchema) }],
    async handler(context) {
      const { query, app, project } = context
      const from = new Date(query.from)
      const to = new Date(query.to)
      // Identify results are written in batches: make this process's own writes visible first.
      await app.scans.flush()
      const rows = await scansOfProject(app.sql, project.id, { from, to, limit: query.per_page, offset: (query.page - 1) * query.per_page })
      return rows.map(scanResource)
    },
  }),
]
