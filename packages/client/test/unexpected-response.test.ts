// An answer that is not problem+json (a proxy's error page in front of the service) is still a
// PalmveinError, with the status, Retry-After and the start of the body.
import { createPalmveinClient, ok, PalmveinError } from '@palmvein/client'
import { expect, it } from 'vitest'

it('a 502 HTML page from a proxy becomes PalmveinError unexpected_response', async () => {
  const proxy = async () => new Response('<html>502 Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html', 'retry-after': '7' } })
  const pv = createPalmveinClient({ baseUrl: 'http://proxy.invalid', credential: 'pvk_x', fetch: proxy })
  const error = await ok(pv.GET('/v1/organizations')).catch((thrown: unknown) => thrown)
  expect(error).toBeInstanceOf(PalmveinError)
  expect(error).toMatchObject({ status: 502, code: 'unexpected_response', detail: '<html>502 Bad Gateway</html>', errors: [], retryAfter: 7, requestId: null })
})
