// PALMVEIN_HTTP_SERVER=uws|node|auto: uWebSockets.js where a build loads, node:http otherwise.
// The choice is made once, at boot, and said: the boot log and /healthz name the transport and
// why a better one was not used.
import { ConfigError } from '../../config.js'
import type { Transport } from '../exchange.js'
import { nodeTransport } from './node.js'
import type { TlsMaterial } from './tls.js'
import { uwsTransport } from './uws.js'
import { loadUwsBuild } from './uws-build.js'

export type HttpServerChoice = 'uws' | 'node' | 'auto'

export interface ChosenTransport {
  transport: Transport
  /** Why this one: empty when it is the best there is. */
  why: string
}

export function chooseTransport(choice: HttpServerChoice, tls?: TlsMaterial): ChosenTransport {
  if (tls) {
    // uSockets fixes the minimum at TLS 1.2 and SSLApp offers no option to raise it: TLS 1.3 only
    // (the spec's promise, our default) needs node:https.
    if (choice === 'uws')
      throw new ConfigError('PALMVEIN_HTTP_SERVER=uws cannot serve TLS here: uWebSockets.js SSLApp cannot refuse TLS 1.2; TLS is served by node:https')
    return { transport: nodeTransport(tls), why: 'TLS is served by node:https (uWebSockets.js SSLApp cannot refuse TLS 1.2)' }
  }
  if (choice === 'node') return { transport: nodeTransport(), why: 'PALMVEIN_HTTP_SERVER=node' }
  const build = loadUwsBuild()
  if (build.ok) return { transport: uwsTransport(build.module, build.description), why: '' }
  const reasons = build.reasons.join('; ')
  if (choice === 'uws') throw new ConfigError(`PALMVEIN_HTTP_SERVER=uws, but no uWebSockets.js build loads here: ${reasons}`)
  return { transport: nodeTransport(), why: `no uWebSockets.js build loads here: ${reasons}` }
}

export const describeTransport = ({ transport, why }: ChosenTransport) => (why ? `${transport.description}; ${why}` : transport.description)
