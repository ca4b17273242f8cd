import fs from 'node:fs/promises'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start } from '../../src/server.js'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { serviceConfig } from '../support/service.js'
import { createSelfSignedCertificate, type SelfSignedCertificate } from '../webhooks/receivers.js'

function get(url: string, options: https.RequestOptions): Promise<{ status: number; body: string; protocol: string }> {
  return new Promise((resolve, reject) => {
    const request = https.get(url, { ...options, agent: false }, (response) => {
      const protocol = (response.socket as import('node:tls').TLSSocket).getProtocol() ?? ''
      let body = ''
      response.on('data', (chunk) => {
        body += chunk
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, protocol }))
    })
    request.on('error', reject)
  })
}

describe('TLS in transit', () => {
  let storage: TestStorage
  let directory: string
  let certificate: SelfSignedCertificate
  beforeAll(async () => {
    storage = await createTestStorage()
    directory = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-tls-'))
    certificate = createSelfSignedCertificate(directory)
  })
  afterAll(async () => {
    await storage.cleanup()
    await fs.rm(directory, { recursive: true, force: true })
  })

  const boot = (tls: Record<string, unknown>) =>
    start({
      config: serviceConfig(storage, {
        httpServer: 'auto',
        tls: { certFile: certificate.certFile, keyFile: certificate.keyFile, passphrase: null, minVersion: 'TLSv1.3', ...tls },
      }),
    })

  it('serves HTTPS with TLS 1.3 only: a TLS 1.3 client is answered, a client capped at TLS 1.2 and plain HTTP are not', async () => {
    const service = await boot({})
    try {
      expect(service.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const answer = await get(`${service.url}/healthz`, { ca: certificate.cert })
      expect(answer.status).toBe(200)
      expect(answer.protocol).toBe('TLSv1.3')
      expect(answer.body).toMatch(/^http: node:https \(Node v\d+[^)]*\), TLS 1\.3 only/m)
      await expect(get(`${service.url}/livez`, { ca: certificate.cert, maxVersion: 'TLSv1.2' })).rejects.toThrow(/protocol version|alert|handshake/i)
      await expect(fetch(service.url.replace('https:', 'http:') + '/livez')).rejects.toThrow()
    } finally {
      await service.close()
    }
  })

  it('accepts TLS 1.2 clients when PALMVEIN_TLS_MIN_VERSION=1.2', async () => {
    const service = await boot({ minVersion: 'TLSv1.2' })
    try {
      const answer = await get(`${service.url}/livez`, { ca: certificate.cert, maxVersion: 'TLSv1.2' })
      expect(answer.status).toBe(200)
      expect(answer.protocol).toBe('TLSv1.2')
    } finally {
      await service.close()
    }
  })

  it('stops the boot with a clear message for an unreadable or unusable certificate, and when uWebSockets.js is forced', async () => {
    await expect(boot({ certFile: path.join(directory, 'missing.pem') })).rejects.toThrow(/PALMVEIN_TLS_CERT_FILE: cannot read .*missing\.pem/)
    const garbage = path.join(directory, 'garbage.pem')
    await fs.writeFile(garbage, '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n')
    await expect(boot({ certFile: garbage })).rejects.toThrow(/not a usable certificate and key/)
    await expect(
      start({
        config: serviceConfig(storage, {
          httpServer: 'uws',
          tls: { certFile: certificate.certFile, keyFile: certificate.keyFile, passphrase: null, minVersion: 'TLSv1.3' },
        }),
      }),
    ).rejects.toThrow(/PALMVEIN_HTTP_SERVER=uws cannot serve TLS here/)
  })

  it('warns at boot when NODE_ENV=production serves without TLS', async () => {
    const lines: string[] = []
    const log = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _, done) {
          lines.push(String(chunk))
          done()
        },
      }),
    )
    const service = await start({ config: serviceConfig(storage, { httpServer: 'auto', nodeEnv: 'production' }), log })
    await service.close()
    expect(lines.join('')).toMatch(/NODE_ENV=production without TLS: terminate TLS 1\.3 in front of the service/)
  })
})
