// The REST client: openapi-fetch over the types generated from the service's OpenAPI document, so
// every path, parameter, body and answer is checked by the compiler.
import createFetchClient, { type Client } from 'openapi-fetch'
import type { paths } from './generated/openapi.js'

export type { components, operations, paths } from './generated/openapi.js'
export type PalmveinClient = Client<paths>

export interface ClientOptions {
  /** The service's origin, e.g. `http://localhost:8080` (paths start with /v1). */
  baseUrl: string
  /** An identity token, an API key (`pvk_…`) or a device token (`pvd_…`), sent as Bearer. */
  credential?: string
  /** Another fetch (a test double, undici with a proxy). */
  fetch?: typeof globalThis.fetch
  headers?: Record<string, string>
}

export function createPalmveinClient(options: ClientOptions): PalmveinClient {
  const headers: Record<string, string> = { ...options.headers }
  if (options.credential) headers.authorization = `Bearer ${options.credential}`
  return createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  })
}
