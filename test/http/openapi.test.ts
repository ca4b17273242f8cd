import SwaggerParser from '@apidevtools/swagger-parser'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { ERROR_STATUS } from '../../src/errors.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { routeTable } from '../../src/http/routes/index.js'
import type { Route } from '../../src/http/route.js'
import { VERSION } from '../../src/version.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const routes = routeTable(VERSION)
const openApiPath = (route: Route) => route.path.replace(/:([A-Za-z_]+)/g, '{$1}')
const SCHEMES = { token: 'FirebaseAuth', key: 'ApiKeyAuth', device: 'DeviceAuth' } as const

describe('OpenAPI document', () => {
  let svc: TestService
  let document: any
  beforeAll(async () => {
    svc = await bootService()
    const response = await svc.request('GET', '/v1/openapi.json')
    expectStatus(response, 200)
    document = response.body
  })
  afterAll(async () => {
    await svc.close()
  })

  it('validates as OpenAPI 3.0', async () => {
    expect(document.openapi).toMatch(/^3\.0\.\d+$/)
    // validate() dereferences in place: give it a copy.
    await SwaggerParser.validate(structuredClone(document))
  })

  it.each(routes.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))('documents %s', (_, route) => {
    const operation = document.paths[openApiPath(route)]?.[route.method]
    expect(operation, 'operation missing').toBeDefined()
    expect(operation.summary).toBe(route.summary)
    // Parameters: every path parameter, every query parameter with its required flag.
    const documented = new Map<string, any>(operation.parameters.map((parameter: any) => [`${parameter.in}:${parameter.name}`, parameter]))
    for (const name of [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1])) {
      expect(documented.get(`path:${name}`), `path parameter ${name}`).toMatchObject({ required: true, schema: { type: 'string', format: 'uuid' } })
    }
    const query = (route.query as any)?.properties ?? {}
    for (const name of Object.keys(query)) {
      expect(documented.get(`query:${name}`), `query parameter ${name}`).toMatchObject({ required: ((route.query as any).required ?? []).includes(name) })
    }
    expect(operation.parameters).toHaveLength(Object.keys(query).length + [...route.path.matchAll(/:/g)].length)
    if (route.body) expect(operation.requestBody?.content?.['application/json']?.schema).toBeDefined()
    else expect(operation.requestBody).toBeUndefined()
    // Security: exactly the accepted credential kinds; none for open routes.
    const expected = route.auth.filter((kind) => kind !== 'none').map((kind) => ({ [SCHEMES[kind as keyof typeof SCHEMES]]: [] }))
    expect(operation.security).toEqual(route.auth.includes('none') ? [] : expected)
    // Responses: every declared status with its schema, and the error statuses that apply.
    for (const response of route.responses) {
      const documentedResponse = operation.responses[String(response.status)]
      expect(documentedResponse, `response ${response.status}`).toBeDefined()
      if (response.schema) expect(documentedResponse.content?.['application/json']?.schema, `schema of ${response.status}`).toBeDefined()
    }
    if (!route.auth.includes('none')) {
      for (const status of ['401', '403']) expect(operation.responses[status]?.content?.['application/problem+json']).toBeDefined()
    }
    if (route.rateLimited) expect(operation.responses['429']).toBeDefined()
  })

  it('documents nothing that is not in the route table', () => {
    const served = new Set(routes.map((route) => `${route.method} ${openApiPath(route)}`))
    const listed = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations as object).map((method) => `${method} ${path}`))
    expect(listed.filter((entry) => !served.has(entry))).toEqual([])
    expect(listed).toHaveLength(served.size)
  })

  it('uses components for the shared schemas and unique operation ids', () => {
    expect(document.components.schemas).toHaveProperty('Problem')
    const operationIds = Object.values(document.paths).flatMap((operations: any) => Object.values(operations).map((operation: any) => operation.operationId))
    expect(new Set(operationIds).size).toBe(operationIds.length)
  })

  it('names each operation as a client would call it', () => {
    const operationIds = Object.values(document.paths).flatMap((operations: any) => Object.values(operations).map((operation: any) => operation.operationId))
    for (const id of operationIds) expect(id).toMatch(/^[a-z]+(?:[A-Z0-9][a-z0-9]*)*$/)
    expect(document.paths['/v1/projects/{project_id}/biometrics/identify'].post.operationId).toBe('identifyPalm')
    expect(document.paths['/v1/projects/{project_id}/members'].get.operationId).toBe('listMembers')
  })

  it('lists every error code in Problem.code', () => {
    expect([...document.components.schemas.Problem.properties.code.enum].sort()).toEqual(Object.keys(ERROR_STATUS).sort())
  })

  it('declares the response headers', () => {
    const identify = document.paths['/v1/projects/{project_id}/biometrics/identify'].post.responses
    expect(Object.keys(identify['200'].headers)).toEqual(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
    expect(Object.keys(identify['429'].headers)).toContain('Retry-After')
    expect(Object.keys(identify['503'].headers)).toContain('Retry-After')
    expect(Object.keys(identify['401'].headers)).toEqual(['X-Request-Id', 'WWW-Authenticate'])
    expect(Object.keys(document.paths['/healthz'].get.responses['200'].headers)).toEqual(['X-Request-Id'])
    for (const name of ['X-Request-Id', 'RateLimit-Limit', 'Retry-After', 'WWW-Authenticate']) expect(document.components.headers).toHaveProperty(name)
  })

  // Every string a request carries says what the service refuses in it: a format, an enum or a
  // pattern (free text: no NUL), so a client built from the document cannot send what json-text.ts
  // or query.ts refuse. (Lone surrogates are said in words: Rust's regex, which generators use, cannot name them.)
  it('gives every request string a format, an enum or a pattern', () => {
    const unstated: string[] = []
    const visit = (schema: any, where: string): void => {
      if (!schema || typeof schema !== 'object') return
      if (schema.$ref) return visit(document.components.schemas[schema.$ref.split('/').pop()], where)
      if (schema.type === 'string' && !schema.format && !schema.enum && !schema.pattern) unstated.push(where)
      for (const [name, property] of Object.entries(schema.properties ?? {})) visit(property, `${where}/${name}`)
      for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) visit(branch, where)
      if (schema.items) visit(schema.items, `${where}/items`)
      if (typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, `${where}/*`)
    }
    for (const [path, operations] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        for (const parameter of operation.parameters) visit(parameter.schema, `${method} ${path} ${parameter.in}:${parameter.name}`)
        visit(operation.requestBody?.content['application/json'].schema, `${method} ${path} body`)
      }
    }
    expect(unstated).toEqual([])
    const text = document.paths['/v1/organizations'].post.requestBody.content['application/json'].schema.properties.name.pattern
    // The pattern as a client's validator (ECMA-262, unicode) reads it: NUL out, anything else in.
    const regex = new RegExp(text, 'u')
    expect(['plain', 'ünïcödé', '😀', ''].map((value) => regex.test(value))).toEqual([true, true, true, true])
    expect(['a\u0000b', '\u0000'].map((value) => regex.test(value))).toEqual([false, false])
    expect(document.info.description).toMatch(/no NUL characters or lone surrogates in any string or field name/)
  })

  it('states the rules the handlers check: one hand at least, a change at least, the capture alphabet and length, the event types', () => {
    const body = (path: string, method: string) => document.paths[path][method].requestBody.content['application/json'].schema
    for (const [path, method] of [
      ['/v1/projects/{project_id}/biometrics/enroll', 'post'],
      ['/v1/device-com/enrollment/{session_id}/complete', 'post'],
    ]) {
      expect(body(path, method).anyOf).toEqual([
        { required: ['left_hand'], properties: { left_hand: { type: 'object' } } },
        { required: ['right_hand'], properties: { right_hand: { type: 'object' } } },
      ])
    }
    expect(body('/v1/projects/{project_id}/members/{member_id}', 'put').minProperties).toBe(1)
    const capture = body('/v1/projects/{project_id}/biometrics/identify', 'post').properties.palm.properties.identify_capture
    expect(capture).toMatchObject({ type: 'string', minLength: 203, maxLength: 2764, pattern: '^[A-Za-z0-9_+/-]*={0,2}$' })
    expect(body('/v1/projects/{project_id}/webhooks', 'post').properties.event_types.items).toEqual({
      type: 'string',
      enum: ['enrollment.completed', 'demo.scan.success'],
    })
    expect(body('/v1/projects/{project_id}/webhooks', 'post').properties.url.pattern).toMatch(/^\^\[Hh\]\[Tt\]\[Tt\]\[Pp\]\[Ss\]\?:\/\//)
    for (const path of ['/v1/projects/{project_id}/transactions', '/v1/projects/{project_id}/scans/results', '/v1/organization/{org_id}/audit-log']) {
      const from = document.paths[path].get.parameters.find((parameter: any) => parameter.name === 'from')
      expect(from.description).toMatch(/must not be after `to`/)
    }
    // Registration is limited per client address though the route charges no project.
    expect(Object.keys(document.paths['/v1/device-com/registration'].post.responses)).toContain('429')
    expect(Object.keys(document.paths['/v1/device-com/registration'].post.responses['429'].headers)).toContain('Retry-After')
  })

  it('passes the Redocly recommended ruleset with no errors and no warnings', async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
    expect(problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} ${problem.location?.[0]?.pointer ?? ''}`)).toEqual([])
  })
})
