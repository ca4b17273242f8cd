// Health probes, at the root and under /v1. No credential, never rate-limited.
import { runHealthChecks } from '../../health.js'
import { defineRoute, Reply, type Route } from '../route.js'

const HTML = 'text/html; charset=utf-8'
const tags = ['Health']

const livez = (path: string, operationId: string) =>
  defineRoute({
    operationId,
    method: 'get',
    path,
    auth: ['none'],
    access: 'none',
    tags,
    usesDatabase: false,
    summary: 'Liveness: the server runs and answers HTTP',
    responses: [{ status: 200, description: 'alive', contentType: HTML }],
    async handler() {
      return new Reply(200, 'OK', HTML)
    },
  })

const healthz = (path: string, operationId: string) =>
  defineRoute({
    operationId,
    method: 'get',
    path,
    auth: ['none'],
    access: 'none',
    tags,
    usesDatabase: false,
    summary: 'Readiness: the services needed to process requests are available (800 ms limit)',
    responses: [
      { status: 200, description: 'ready; a WARNING line names a non-critical service that is down', contentType: HTML },
      { status: 503, description: 'a critical service is unavailable', contentType: HTML },
    ],
    async handler({ app }) {
      const report = await runHealthChecks(app.health)
      const text = [report.healthy ? 'OK' : 'UNAVAILABLE', ...report.lines].join('\n')
      return new Reply(report.healthy ? 200 : 503, text, HTML, { 'Cache-Control': 'no-store' })
    },
  })

export const healthRoutes: Route[] = [
  livez('/livez', 'getLiveness'),
  livez('/v1/livez', 'getLivenessV1'),
  healthz('/healthz', 'getReadiness'),
  healthz('/v1/healthz', 'getReadinessV1'),
]
