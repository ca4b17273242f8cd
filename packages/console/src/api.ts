// The console's one way to the service: the public REST API, through a client typed from the
// OpenAPI document the service serves (generated at build into generated/api.d.ts).
import createClient, { type Middleware } from 'openapi-fetch'
import type { components, paths } from './generated/api'
import { currentToken, tokenRefused } from './session'

export type Problem = components['schemas']['Problem']
export type Schemas = components['schemas']

export const api = createClient<paths>({ baseUrl: location.origin })

const bearer: Middleware = {
  onRequest({ request }) {
    // A call made with another credential (the playground's API key) keeps it.
    const token = currentToken()
    if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`)
    return request
  },
  async onResponse({ request, response }) {
    if (response.status === 401 && request.headers.get('authorization') === `Bearer ${currentToken()}`) await tokenRefused()
    return response
  },
}
api.use(bearer)

/** The problem detail of a failed call, or a network failure in the same shape. */
export function problemOf(error: unknown): Problem {
  if (error && typeof error === 'object' && 'code' in error) return error as Problem
  return {
    type: 'about:blank',
    title: 'The service could not be reached',
    status: 0,
    code: 'unavailable',
    detail: String(error ?? 'no answer'),
    request_id: '',
  } as Problem
}

/** Runs a call; a refusal or a network failure comes back as a Problem. */
export async function call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<{ data: T } | { problem: Problem }> {
  try {
    const { data, error, response } = await request
    if (response.ok) return { data: data as T }
    return { problem: problemOf(error) }
  } catch (error) {
    return { problem: problemOf(error instanceof Error ? error.message : error) }
  }
}
