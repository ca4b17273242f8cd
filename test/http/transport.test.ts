import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadUwsBuild } from '../../src/http/adapters/uws-build.js'
import { start } from '../../src/server.js'
import { usingPostgres } from '../support/database.js'
import { createPalmTenant, type PalmTenant } from '../support/palms.js'
import { bootService, expectProblem, expectStatus, serviceConfig, type TestService } from '../support/service.js'
import { transport, transportLine } from '../support/transport.js'

/** One raw HTTP/1.1 exchange, to see exactly what comes back (a HEAD answer has no body at all). */
function rawRequest(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(`${head}\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`))
    let answer = ''
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe(`HTTP transport ${transport} (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'transport@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('names the transport in /healthz', async () => {
    const health = await svc.request('GET', '/healthz')
    expectStatus(health, 200)
    expect(health.text).toMatch(transportLine)
  })

  it('refuses to share a port another server listens on', async () => {
    const port = Number(new URL(svc.url).port)
    await expect(start({ config: serviceConfig(svc.storage, { port }) })).rejects.toThrow(
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use`),
    )
    expectStatus(await svc.request('GET', '/livez'), 200)
  })

  it('answers HEAD like GET, without the body', async () => {
    const get = await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.key })
    const head = await svc.request('HEAD', `/v1/projects/${tenant.projectId}`, { auth: tenant.key })
    expectStatus(head, 200)
    expect(head.text).toBe('')
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)))
    const raw = await rawRequest(svc.url, 'HEAD /livez HTTP/1.1')
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(raw.endsWith('\r\n\r\n')).toBe(true)
  })

  it('treats a trailing slash as the route', async () => {
    const plain = await svc.request('GET', '/v1/projects', { auth: tenant.key })
    const slashed = await svc.request('GET', '/v1/projects/', { auth: tenant.key })
    expectStatus(slashed, 200)
    expect(slashed.body).toEqual(plain.body)
  })

  it('answers another method on a known path with 405 and an Allow that does not list it', async () => {
    for (const method of ['PUT', 'DELETE', 'OPTIONS']) {
      const answer = await svc.request(method, '/v1/projects/', { auth: tenant.key })
      expectProblem(answer, 405, 'method_not_allowed')
      expect(answer.headers.get('allow')).toBe('GET, HEAD')
    }
    expectProblem(await svc.request('GET', '/v1/nowhere'), 404, 'not_found')
  })

  it('answers methods it does not route: 405 with Allow on a known path, 404 elsewhere, 501 for a method HTTP does not define', async () => {
    const answers = await Promise.all(
      ['PROPFIND /v1/projects', 'QUERY /v1/projects', 'QUERY /v1/nowhere', 'FOO /v1/projects'].map((line) => rawRequest(svc.url, `${line} HTTP/1.1`)),
    )
    if (transport === 'node') {
      expect(answers.map((answer) => answer.split('\r\n')[0])).toEqual([
        'HTTP/1.1 405 Method Not Allowed',
        'HTTP/1.1 405 Method Not Allowed',
        'HTTP/1.1 404 Not Found',
        'HTTP/1.1 501 Not Implemented',
      ])
      for (const answer of answers) expect(answer).toMatch(/\r\nContent-Type: application\/problem\+json/i)
      expect(answers[0]).toMatch(/\r\nAllow: GET, HEAD\r\n/i)
    } else {
      // uWebSockets.js 20.30's C++ parser closes the connection on a method outside its list before
      // any JavaScript runs (no hook to answer it): nothing is served, and the server is unaffected.
      expect(answers).toEqual(['', '', '', ''])
    }
    expectStatus(await svc.request('GET', '/livez'), 200)
  })

  it('closes the connection after refusing an oversized body, and keeps serving', async () => {
    const answer = await svc.request('POST', `/v1/projects/${tenant.projectId}/members`, {
      auth: tenant.key,
      rawBody: Buffer.alloc(3 * 1024 * 1024, 0x20),
      headers: { 'content-type': 'application/json' },
    })
    expectProblem(answer, 413, 'payload_too_large')
    expectStatus(await svc.request('GET', '/livez'), 200)
  })

  // Seen in the fuzzing: an identity token on an API-key route is refused (403) before the body is
  // read; the body went on past the cap after that answer had kept the connection open, and the
  // next request on it was never read (the client waited out its timeout).
  it('keeps a connection it answered early usable when the body then passes the cap', async () => {
    const token = await svc.token('transport@example.com')
    const { hostname, port } = new URL(svc.url)
    const socket = net.connect(Number(port), hostname)
    let received = ''
    let ended = false
    socket.on('data', (chunk) => {
      received += chunk
    })
    socket.on('end', () => {
      ended = true
    })
    const arrived = async (done: () => boolean) => {
      for (let waited = 0; !done() && !ended && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const length = 1536 * 1024
    socket.write(
      `POST /v1/projects/${tenant.projectId}/biometrics/enroll HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
    )
    socket.write(Buffer.alloc(64 * 1024, 0x20))
    await arrived(() => received.includes('\r\n\r\n'))
    expect(received).toMatch(/^HTTP\/1\.1 403 /)
    socket.write(Buffer.alloc(length - 64 * 1024, 0x20))
    socket.write(`GET /livez HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`)
    await arrived(() => /HTTP\/1\.1 200 /.test(received))
    socket.destroy()
    // Either answer keeps the client from waiting: the next request's, or the connection closed.
    expect(/HTTP\/1\.1 200 /.test(received) || ended).toBe(true)
  })
})

describe('transport choice', () => {
  it('forcing uWebSockets.js where no build loads fails at boot and says why; where one loads it serves', async () => {
    const build = loadUwsBuild()
    const booting = bootService({ config: { httpServer: 'uws' } })
    if (build.ok) {
      const svc = await booting
      expect((await svc.request('GET', '/healthz')).text).toMatch(/^http: uWebSockets\.js /m)
      await svc.close()
    } else {
      await expect(booting).rejects.toThrow(/PALMVEIN_HTTP_SERVER=uws, but no uWebSockets\.js build loads here: .*ABI|GLIBC/)
    }
  }, 60_000)
})
