// The committed types are the served document's: regenerate (npm run generate) when this fails.
import { readFile } from 'node:fs/promises'
import { createPalmveinClient, ok } from '@palmvein/client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bootService, type TestService } from '../../../test/support/service.js'
import { GENERATED_TYPES, renderOpenApiTypes, serviceOpenApiDocument } from '../scripts/openapi-types.js'

let svc: TestService
beforeAll(async () => {
  svc = await bootService()
}, 120_000)
afterAll(async () => {
  await svc?.close()
})

it('the script builds the document GET /v1/openapi.json serves, and src/generated/openapi.ts is its types', async () => {
  const served = await ok(createPalmveinClient({ baseUrl: svc.url }).GET('/v1/openapi.json', { parseAs: 'json' }))
  expect(served).toEqual(serviceOpenApiDocument())
  expect(await readFile(GENERATED_TYPES, 'utf8')).toBe(await renderOpenApiTypes(served as unknown as Record<string, unknown>))
}, 60_000)
