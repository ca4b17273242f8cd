// Scan results (spec "Scans, transactions, project"): every identify and enroll, newest first.
import { scanResults } from '../../domain/identification/scans.js'
import { scanResource, ScanResultSchema } from '../resources/scans.js'
import { defineRoute, type Route } from '../route.js'
import { Pagination, parseWindow, PathIds, requireOrderedWindow, TimeWindow, Type } from '../schema.js'

export const scanRoutes: Route[] = [
  defineRoute({
    operationId: 'listScanResults',
    method: 'get',
    path: '/v1/projects/:project_id/scans/results',
    auth: ['token', 'key'],
    access: 'project',
    tags: ['Scans'],
    rateLimited: true,
    summary: 'Scan results created in [from, to], newest first, one page',
    params: PathIds('project_id'),
    query: Type.Object({ ...TimeWindow, ...Pagination(10_000) }, { additionalProperties: false }),
    checkInput: requireOrderedWindow,
    responses: [{ status: 200, description: 'scan results', schema: Type.Array(ScanResultSchema) }],
    async handler(context) {
      const { query, app, project } = context
      const rows = await scanResults(app, project.id, { ...parseWindow(query), page: query.page, per_page: query.per_page })
      return rows.map(scanResource)
    },
  }),
]
