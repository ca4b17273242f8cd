// Transactions (spec "Scans, transactions, project"): the JSON list and the CSV export of a time
// window. Terminals record them through Device-Com (device-com.ts).
import { transactionPages } from '../../domain/devices/transactions.js'
import { CSV_COLUMNS, CSV_CONTENT_TYPE, transactionsCsv, transactionsJson } from '../resources/transaction-export.js'
import { TransactionSchema } from '../resources/transactions.js'
import { defineRoute, StreamReply, type Route } from '../route.js'
import { parseWindow, PathIds, requireOrderedWindow, TimeWindow, Type } from '../schema.js'

const tags = ['Transactions']
const WindowQuery = Type.Object(TimeWindow, { additionalProperties: false })

export const transactionRoutes: Route[] = [
  defineRoute({
    operationId: 'listTransactions',
    method: 'get',
    path: '/v1/projects/:project_id/transactions',
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Transactions whose timestamp is in [from, to], newest first (streamed)',
    params: PathIds('project_id'),
    query: WindowQuery,
    checkInput: requireOrderedWindow,
    responses: [{ status: 200, description: 'transactions', schema: Type.Array(TransactionSchema) }],
    async handler(context) {
      const { project } = context
      const window = parseWindow(context.query)
      return new StreamReply(200, transactionsJson(await transactionPages(context.app.sql, project.id, window)), 'application/json; charset=utf-8')
    },
  }),
  defineRoute({
    operationId: 'exportTransactions',
    method: 'get',
    path: '/v1/projects/:project_id/transactions/export',
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: `The same rows as the list, as CSV (RFC 4180, CRLF, header row; streamed). Columns: ${CSV_COLUMNS.join(', ')}. Absent values are empty cells; text cells starting with = + - @ tab or CR get a leading ' so spreadsheets do not run them as formulas`,
    params: PathIds('project_id'),
    query: WindowQuery,
    checkInput: requireOrderedWindow,
    responses: [{ status: 200, description: 'text/csv; charset=utf-8 file', contentType: CSV_CONTENT_TYPE }],
    async handler(context) {
      const { project } = context
      const window = parseWindow(context.query)
      const chunks = transactionsCsv(await transactionPages(context.app.sql, project.id, window))
      const name = `transactions-${project.id}-${window.from.toISOString().slice(0, 10)}-${window.to.toISOString().slice(0, 10)}.csv`
      return new StreamReply(200, chunks, CSV_CONTENT_TYPE, { 'Content-Disposition': `attachment; filename="${name}"` })
    },
  }),
]
