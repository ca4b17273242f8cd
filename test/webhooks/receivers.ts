// Loopback webhook receivers for the tests: plain HTTP or HTTPS with a self-signed certificate
// made by openssl at test time. Each records what it received and answers as the test says.
import { selfSignedCertificate } from '../../bench/service/tls.mjs'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** What to answer to the n-th request (0-based); 'hang' never answers. */
export type Responder = (request: ReceivedRequest, index: number) => { status: number; body?: string | Buffer; headers?: Record<string, string> } | 'hang'

export interface Receiver {
  url: string
  port: number
  requests: ReceivedRequest[]
  /** TCP connections accepted (proves that a refused target was never contacted). */
  connections: number
  respond: Responder
  close(): Promise<void>
}

export interface SelfSignedCertificate {
  certFile: string
  keyFile: string
  cert: string
  key: string
}

/** A certificate for `names` (localhost and 127.0.0.1 by default), valid for a day. */
export function createSelfSignedCertificate(directory: string, names = ['DNS:localhost', 'IP:127.0.0.1']): SelfSignedCertificate {
  const { certFile, keyFile } = selfSignedCertificate(directory, names)
  return { certFile, keyFile, cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') }
}

export async function startReceiver(
  options: {
    respond?: Responder
    tls?: SelfSignedCertificate
    host?: string
    /** Host name used in the URL (e.g. localhost for a certificate check); the bind host by default. */
    urlHost?: string
  } = {},
): Promise<Receiver> {
  const host = options.host ?? '127.0.0.1'
  const hanging = new Set<http.ServerResponse>()
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    connections: 0,
    respond: options.respond ?? (() => ({ status: 200, body: 'ok' })),
    close: async () => {},
  }
  const handler: http.RequestListener = (request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const received = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') }
      receiver.requests.push(received)
      const answer = receiver.respond(received, receiver.requests.length - 1)
      if (answer === 'hang') {
        hanging.add(response)
        return
      }
      response.writeHead(answer.status, answer.headers ?? {})
      response.end(answer.body ?? '')
    })
  }
  const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler) : http.createServer(handler)
  server.on('connection', () => {
    receiver.connections += 1
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  receiver.port = (server.address() as AddressInfo).port
  receiver.url = `${options.tls ? 'https' : 'http'}://${options.urlHost ?? host}:${receiver.port}/hook`
  receiver.close = async () => {
    for (const response of hanging) response.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return receiver
}
