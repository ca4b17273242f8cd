// GET /metrics on its own listener (PALMVEIN_METRICS_HOST:PALMVEIN_METRICS_PORT), never on the
// public port: the scrape needs no credential, so it stays on a private address.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'

export interface MetricsListener {
  url: string
  close(): Promise<void>
}

/**
 * Opens the listener of `config.metrics`. When its port cannot be had the service serves on without
 * metrics: the reason is logged and returned for /healthz (another process may hold the default).
 */
export async function openMetricsListener(registry: Registry, at: { host: string; port: number }, log: Logger): Promise<MetricsListener | { failure: string }> {
  try {
    const listener = await listenMetrics(registry, at.host, at.port, log)
    log.info(`Metrics: Prometheus scrapes ${listener.url}`)
    return listener
  } catch (error) {
    const failure = `cannot listen on ${at.host}:${at.port} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set PALMVEIN_METRICS_PORT to a free port, or 0 to turn metrics off`
    log.error(`Metrics: ${failure}`)
    return { failure }
  }
}

export async function listenMetrics(registry: Registry, host: string, port: number, log: Logger): Promise<MetricsListener> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only /metrics is served here\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET /metrics\n')
      return
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType }).end(request.method === 'HEAD' ? undefined : text)
      },
      (error: unknown) => {
        log.error({ err: error }, 'Metrics: collecting failed')
        response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('collecting the metrics failed; see the service log\n')
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
