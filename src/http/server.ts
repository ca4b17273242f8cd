// The HTTP server: the request discipline (dispatch.ts) over the chosen transport, with graceful
// close: stop accepting, wait for the requests in flight, then close what remains.
import type { AppContext } from '../app-context.js'
import { chooseTransport, describeTransport, type HttpServerChoice } from './adapters/choose.js'
import type { TlsMaterial } from './adapters/tls.js'
import { createDispatcher } from './dispatch.js'
import type { Route } from './route.js'

export interface HttpServer {
  /** The transport and why it was chosen ("node:http (Node v24.1.0); no uWebSockets.js build loads here: ..."). */
  readonly describe: string
  readonly transport: 'uws' | 'node'
  listen(host: string, port: number): Promise<number>
  /** Stop accepting connections, then wait for requests in flight to be answered. */
  close(timeoutMs?: number): Promise<void>
}

export function createHttpServer(app: AppContext, routes: Route[], choice: HttpServerChoice = 'auto', tls?: TlsMaterial): HttpServer {
  const chosen = chooseTransport(choice, tls)
  const { transport } = chosen
  const dispatch = createDispatcher(app, routes)
  let inFlight = 0
  let drained: (() => void) | null = null

  return {
    describe: describeTransport(chosen),
    transport: transport.name,
    listen(host, port) {
      return transport.listen(host, port, (exchange) => {
        inFlight += 1
        // dispatch answers every error itself; what is left (a write failing) must not stop the process.
        void dispatch(exchange).catch((error) => { app.log.error({ err: error }, 'request failed') }).finally(() => {
          inFlight -= 1
          if (inFlight === 0 && drained) drained()
        })
      })
    },
    async close(timeoutMs = 10_000) {
      transport.stopListening()
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => { drained = resolve }),
          new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
        ])
      }
      transport.closeConnections()
    },
  }
}
