// The HTTP server: the request discipline (dispatch.ts) over the chosen transport, with graceful
// close: stop accepting, wait for the requests in flight, then close what remains. It listens
// before the service is ready (the boot answers 503 meanwhile, boot-answers.ts), and serves the
// routes once `serve` is called.
import type { AppContext } from '../app-context.js'
import { chooseTransport, describeTransport, type HttpServerChoice } from './adapters/choose.js'
import type { TlsMaterial } from './adapters/tls.js'
import type { Exchange } from './exchange.js'
import { createDispatcher } from './dispatch.js'
import type { Route } from './route.js'

export interface HttpServer {
  /** The transport and why it was chosen ("node:http (Node v24.1.0); no uWebSockets.js build loads here: ..."). */
  readonly describe: string
  readonly transport: 'uws' | 'node'
  /** Listens at once; until `serve`, every request goes to `booting`. */
  listen(host: string, port: number, booting: (exchange: Exchange) => void): Promise<number>
  /** From now on requests are dispatched to the routes. */
  serve(app: AppContext, routes: Route[]): void
  /** Requests dispatched to the routes so far, and those not yet answered. */
  requests(): { started: number; inFlight: number }
  /** Stop accepting connections, then wait for requests in flight to be answered. */
  close(timeoutMs?: number): Promise<void>
}

export function createHttpServer(choice: HttpServerChoice = 'auto', tls?: TlsMaterial): HttpServer {
  const chosen = chooseTransport(choice, tls)
  const { transport } = chosen
  let serving: { app: AppContext; dispatch: (exchange: Exchange) => Promise<void> } | null = null
  let inFlight = 0
  let started = 0
  let drained: (() => void) | null = null

  return {
    describe: describeTransport(chosen),
    transport: transport.name,
    serve(app, routes) {
      serving = { app, dispatch: createDispatcher(app, routes) }
    },
    listen(host, port, booting) {
      return transport.listen(host, port, (exchange) => {
        if (!serving) return booting(exchange)
        const { app, dispatch } = serving
        inFlight += 1
        started += 1
        // dispatch answers every error itself; what is left (a write failing) must not stop the process.
        void dispatch(exchange)
          .catch((error) => {
            app.log.error({ err: error }, 'request failed')
          })
          .finally(() => {
            inFlight -= 1
            if (inFlight === 0 && drained) drained()
          })
      })
    },
    requests: () => ({ started, inFlight }),
    async close(timeoutMs = 10_000) {
      transport.stopListening()
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => {
            drained = resolve
          }),
          new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
        ])
      }
      transport.closeConnections()
    },
  }
}
