// The request log: one line per request at info, carrying the request id (the caller's X-Request-Id
// when sane); nothing per request at warn. The per-request child logger is made only when a line
// is written, so these lines are what tells that it still carries the id.
import { Writable } from 'node:stream'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start, type Service } from '../../src/server.js'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { request, serviceConfig } from '../support/service.js'

interface LogLine {
  level: number
  msg: string
  request_id?: string
  route?: string
  status?: number
  method?: string
}

async function serviceLogging(storage: TestStorage, level: 'info' | 'warn') {
  const lines: LogLine[] = []
  const sink = new Writable({
    write(chunk, _, done) {
      for (const line of String(chunk).trim().split('\n')) lines.push(JSON.parse(line))
      done()
    },
  })
  const service = await start({ config: serviceConfig(storage, { logLevel: level }), log: pino({ level }, sink) })
  return { service, lines }
}

describe('the request log', () => {
  let storage: TestStorage
  let service: Service | undefined
  beforeAll(async () => {
    storage = await createTestStorage()
  }, 120_000)
  afterAll(async () => {
    await service?.close()
    await storage.cleanup()
  })

  it('writes one line per request at info, with the request id, the route and the status', async () => {
    const logging = await serviceLogging(storage, 'info')
    service = logging.service
    const health = await request(service.url, 'GET', '/livez', { headers: { 'X-Request-Id': 'trace-livez-1' } })
    expect(health.status).toBe(200)
    const refused = await request(service.url, 'GET', '/v1/organizations', {
      headers: { 'X-Request-Id': 'trace-refused-2', Authorization: 'Bearer not-a-token-9f8e' },
    })
    expect(refused.status).toBe(401)
    const requests = logging.lines.filter((line) => line.msg === 'request')
    expect(requests.find((line) => line.request_id === 'trace-livez-1')).toMatchObject({ level: 30, method: 'GET', route: '/livez', status: 200 })
    expect(requests.find((line) => line.request_id === 'trace-refused-2')).toMatchObject({ status: 401 })
    expect(JSON.stringify(logging.lines)).not.toContain('not-a-token-9f8e')
    await service.close()
    service = undefined
  }, 60_000)

  it('writes nothing per request at warn', async () => {
    const logging = await serviceLogging(storage, 'warn')
    service = logging.service
    const before = logging.lines.length
    for (let index = 0; index < 5; index++) expect((await request(service.url, 'GET', '/livez')).status).toBe(200)
    expect((await request(service.url, 'GET', '/no-such-route')).status).toBe(404)
    expect(logging.lines.slice(before)).toEqual([])
    await service.close()
    service = undefined
  }, 60_000)
})
