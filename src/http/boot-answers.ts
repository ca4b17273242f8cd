// What the HTTP listener answers before the service is ready to serve (it listens before the
// database answers, so that /healthz can say why the boot waits): /livez 200; /healthz 503 with
// the reason; every other request 503 problem+json with Retry-After, never a hang or a refusal.
import { newId } from '../ids.js'
import { ServiceError } from '../errors.js'
import type { Exchange } from './exchange.js'
import { problemReply } from './problem.js'
import type { Logger } from 'pino'

const HTML = 'text/html; charset=utf-8'
const BOOT_RETRY_AFTER_SECONDS = 2

/** `status()`: what the boot does now ("waiting for the database (...)", "starting"). */
export function bootAnswers(status: () => string, log: Logger): (exchange: Exchange) => void {
  return (exchange) => {
    exchange.body.catch(() => {})
    const requestId = newId()
    const path = exchange.path.replace(/^\/v1(?=\/)/, '')
    const send = (status: number, body: string, contentType: string, headers: Record<string, string> = {}) =>
      exchange.send({ status, headers: { 'X-Request-Id': requestId, 'Content-Type': contentType, 'Cache-Control': 'no-store', ...headers } }, body)
    if (exchange.method === 'GET' && path === '/livez') return send(200, 'OK', HTML)
    if (exchange.method === 'GET' && path === '/healthz') return send(503, `UNAVAILABLE\nFAIL boot: ${status()}`, HTML)
    const reply = problemReply(
      new ServiceError('database_unavailable', `the service is starting (${status()}); retry shortly`, { retryAfter: BOOT_RETRY_AFTER_SECONDS }),
      requestId,
      () => log,
    )
    send(reply.status, reply.body as string, reply.contentType!, reply.headers)
  }
}
