// PALMVEIN_HTTP_SERVER=uws|node|auto: uWebSockets.js where a build loads, node:http otherwise.
// The choice is made once, at boot, and said: the boot log and /healthz name the transport and
// why a better one was not used.
import type { Transport } from '../exchange.js'
import { nodeTransport } from './node.js'
import { uwsTransport } from './uws.js'
import { loadUwsBuild } from './uws-build.js'

export type HttpServerChoice = 'uws' | 'node' | 'auto'

export interface ChosenTransport {
  transport: Transport
  /** Why this one: empty when it is the best there is. */
  why: string
}

export function chooseTransport(choice: HttpServerChoice): ChosenTransport {
  if (choice === 'node') return { transport: nodeTransport(), why: 'PALMVEIN_HTTP_SERVER=node' }
  const build = loadUwsBuild()
  if (build.ok) return { transport: uwsTransport(build.module, build.description), why: '' }
  const reasons = build.reasons.join('; ')
  if (choice === 'uws') throw new Error(`PALMVEIN_HTTP_SERVER=uws, but no uWebSockets.js build loads here: ${reasons}`)
  return { transport: nodeTransport(), why: `no uWebSockets.js build loads here: ${reasons}` }
}

export const describeTransport = ({ transport, why }: ChosenTransport) => why ? `${transport.description}; ${why}` : transport.description
