// The HTTP/1.1 shapes that smuggle a request or lose a write, sent byte for byte on a raw socket to
// each transport: pipelining, conflicting lengths, oversized heads. What uWebSockets.js's C++ parser
// refuses before any JavaScript runs is asserted as it is (docs/http-limits.md says why).
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { scrape } from '../support/metrics.js'
import { createPalmTenant, type PalmTenant } from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'
import { transport } from '../support/transport.js'

interface RawAnswer {
  /** Everything the server wrote. */
  text: string
  /** How it ended: the server closed, reset, or the wait ran out with the connection still open. */
  end: 'closed' | 'reset' | 'open'
}

/** Writes `bytes` in one TCP write and collects the answer for at most `waitMs`. */
function rawExchange(url: string, bytes: string, waitMs = 2_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes))
    const finish = (end: RawAnswer['end']) => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ text: Buffer.concat(chunks).toString('latin1'), end })
    }
    const timer = setTimeout(() => finish('open'), waitMs)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => finish('closed'))
    socket.on('close', () => finish('closed'))
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ECONNRESET' || error.code === 'EPIPE' ? 'reset' : 'closed'))
  })
}

const statusLines = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))
/** The problem+json bodies in an answer, in order. */
const problemCodes = (text: string) => [...text.matchAll(/"code":"([a-z_]+)"/g)].map((match) => match[1])

describe(`HTTP/1.1 framing on ${transport} (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  let host: string
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'framing@example.com')
    host = new URL(svc.url).host
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  const membersPath = () => `/v1/projects/${tenant.projectId}/members`
  const memberNames = async () => {
    const list = await svc.request('GET', `${membersPath()}?per_page=100`, { auth: tenant.key })
    expectStatus(list, 200)
    return (list.body as Array<{ display_name: string }>).map((member) => member.display_name)
  }
  const post = (displayName: string, extraHeaders = '') => {
    const body = JSON.stringify({ display_name: displayName })
    return (
      `POST ${membersPath()} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${tenant.key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`
    )
  }
  const get = (path: string, extraHeaders = '') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extraHeaders}\r\n`

  /** POSTs to the members route that dispatch has finished with (run or not), by status. */
  const memberPosts = async () => {
    const family = (await scrape(svc)).get('palmvein_http_requests_total')
    return (family?.data ?? [])
      .filter((sample) => sample.labels.method === 'POST' && sample.labels.route === '/v1/projects/{project_id}/members')
      .reduce((sum, sample) => sum + (sample.value ?? 0), 0)
  }

  it('answers two pipelined requests in order, or (uWS) answers neither and runs neither', async () => {
    const posted = await memberPosts()
    const answer = await rawExchange(svc.url, post('Pipelined') + get('/livez', 'Connection: close\r\n'))
    // The POST's dispatch has finished (whatever it did) before its effect is looked for.
    await vi.waitFor(async () => expect(await memberPosts()).toBe(posted + 1), { timeout: 10_000, interval: 50 })
    if (transport === 'node') {
      expect(statusLines(answer.text)).toEqual([201, 200])
      expect(answer.text.indexOf('Pipelined')).toBeLessThan(answer.text.lastIndexOf('HTTP/1.1 200'))
      expect(await memberNames()).toContain('Pipelined')
    } else {
      // uWS's C++ layer closes a connection whose next request arrives while one is pending (it
      // allows only synchronous pipelining): no answer, and the POST must not have been executed.
      expect(answer.text).toBe('')
      expect(answer.end).not.toBe('open')
      expect(await memberNames()).not.toContain('Pipelined')
    }
  })

  it('refuses two Content-Length headers, different or equal, with 400, stores nothing, and closes the connection', async () => {
    for (const extra of [20, 0]) {
      const body = JSON.stringify({ display_name: `Smuggled ${extra}` })
      const bytes =
        `POST ${membersPath()} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${tenant.key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Length: ${Buffer.byteLength(body) + extra}\r\n\r\n${body}`
      const answer = await rawExchange(svc.url, bytes)
      expect(statusLines(answer.text)).toEqual([400])
      expect(problemCodes(answer.text)).toEqual(['invalid_request'])
      expect(answer.end).not.toBe('open')
    }
    expect((await memberNames()).filter((name) => name.startsWith('Smuggled'))).toEqual([])
  })

  it('refuses Content-Length with Transfer-Encoding (uWS: its parser closes the connection first)', async () => {
    const answer = await rawExchange(svc.url, post('Chunked', 'Transfer-Encoding: chunked\r\n'))
    if (transport === 'node') {
      expect(statusLines(answer.text)).toEqual([400])
      expect(problemCodes(answer.text)).toEqual(['invalid_request'])
    } else expect(answer.text).toBe('')
    expect(answer.end).not.toBe('open')
    expect(await memberNames()).not.toContain('Chunked')
  })

  it('answers 431 for header fields past 16 KiB and keeps serving', async () => {
    const answer = await rawExchange(svc.url, get('/livez', `X-Big: ${'a'.repeat(20_000)}\r\n`))
    expect(statusLines(answer.text)).toEqual([431])
    expect(problemCodes(answer.text)).toEqual(['header_fields_too_large'])
    expect(answer.end).not.toBe('open')
    expectStatus(await svc.request('GET', '/livez'), 200)
  })

  it("a 1 MiB header and 10,000 headers: 431 on node:http; uWS's parser cuts the connection", async () => {
    const huge = await rawExchange(svc.url, get('/livez', `X-Big: ${'a'.repeat(1 << 20)}\r\n`))
    const many = await rawExchange(svc.url, get('/livez', Array.from({ length: 10_000 }, (_, i) => `X-H${i}: v\r\n`).join('')))
    for (const answer of [huge, many]) {
      if (transport === 'node') {
        expect(statusLines(answer.text)).toEqual([431])
        expect(problemCodes(answer.text)).toEqual(['header_fields_too_large'])
      } else expect(answer.text).toBe('')
      expect(answer.end).not.toBe('open')
    }
    expectStatus(await svc.request('GET', '/livez'), 200)
  })

  it("serves 48 extra header fields; past that uWS's parser stops answering (node:http serves them)", async () => {
    const fields = (count: number) => Array.from({ length: count }, (_, i) => `X-H${i}: v\r\n`).join('')
    expect(statusLines((await rawExchange(svc.url, get('/livez', `${fields(46)}Connection: close\r\n`))).text)).toEqual([200])
    const past = await rawExchange(svc.url, get('/livez', `${fields(60)}Connection: close\r\n`), 1_000)
    if (transport === 'node') expect(statusLines(past.text)).toEqual([200])
    else expect(past).toEqual({ text: '', end: 'open' })
  })
})
