// The node:http transport: what serves where no uWebSockets.js build loads (Node 22+ on glibc
// older than 2.38). Same exchange as uWS: the body capped while read, backpressure on streams,
// aborts seen when the client goes away before the answer is complete.
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { Duplex } from 'node:stream'
import pino from 'pino'
import { ServiceError } from '../../errors.js'
import { newId } from '../../ids.js'
import { problemReply } from '../problem.js'
import { HEADER_LIMIT_BYTES } from '../request-framing.js'
import type { TlsMaterial } from './tls.js'
import { once } from 'node:events'
import { BODY_LIMIT_BYTES, bodyTooLarge } from '../body.js'
import { BODY_METHODS, releaseChunks, type Exchange, type ResponseHead, type Transport } from '../exchange.js'

function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > BODY_LIMIT_BYTES) {
        req.removeAllListeners('data')
        if (res.headersSent) {
          // Answered already (a refusal that needs no body), the connection kept: read the rest
          // and drop it, or the next request on this connection is never read.
          req.resume()
        } else {
          // Answer now and close the connection after the answer rather than read the rest.
          res.shouldKeepAlive = false
          req.pause()
        }
        return reject(bodyTooLarge())
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks, size)))
    req.on('error', reject)
  })
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

function exchangeOf(req: IncomingMessage, res: ServerResponse): Exchange {
  let isAborted = false
  let onAbort!: () => void
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve
  })
  // The response closing before it finished: the client went away.
  res.on('close', () => {
    if (!res.writableFinished) {
      isAborted = true
      onAbort()
    }
  })
  const method = (req.method ?? 'GET').toUpperCase()
  const target = req.url ?? '/'
  const mark = target.indexOf('?')
  const writeHead = (head: ResponseHead, extra: Record<string, string | number> = {}) => {
    res.writeHead(head.status, { ...head.headers, ...extra })
  }
  return {
    method,
    path: mark < 0 ? target : target.slice(0, mark),
    query: mark < 0 ? '' : target.slice(mark + 1),
    remoteAddress: req.socket.remoteAddress ?? '',
    headers: headersOf(req),
    body: BODY_METHODS.has(method) ? readBody(req, res) : Promise.resolve(Buffer.alloc(0)),
    aborted,
    isAborted: () => isAborted,
    send(head, body) {
      if (isAborted) return
      // On HEAD, node:http leaves the body out by itself; the length still announces it.
      writeHead(head, { 'Content-Length': body === null ? 0 : Buffer.byteLength(body) })
      res.end(body ?? undefined)
    },
    async stream(head, chunks) {
      if (isAborted) return
      writeHead(head)
      try {
        if (method === 'HEAD') await releaseChunks(chunks)
        else {
          for await (const chunk of chunks) {
            if (isAborted) return
            if (!res.write(chunk)) {
              await Promise.race([aborted, once(res, 'drain')])
              if (isAborted) return
            }
          }
        }
        if (!isAborted) res.end()
      } catch (error) {
        res.destroy()
        throw error
      }
    },
  }
}

const silentLog = pino({ level: 'silent' })

/**
 * A request node:http could not parse never reaches a handler: answer it as problem+json anyway
 * (501 for a method HTTP does not define, 431 for a head past HEADER_LIMIT_BYTES, 400 for the rest)
 * and close the connection.
 */
function answerUnparsable(error: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Duplex) {
  if (!socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) return socket.destroy()
  const reply = problemReply(
    error.code === 'HPE_INVALID_METHOD'
      ? new ServiceError('not_implemented', 'the request method is not one HTTP defines')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new ServiceError('header_fields_too_large', `the request's header fields exceed ${HEADER_LIMIT_BYTES} bytes`)
        : // Two Content-Length headers, or one with Transfer-Encoding, land here too (HPE_UNEXPECTED_CONTENT_LENGTH).
          new ServiceError('invalid_request', 'the request is not well-formed HTTP/1.1'),
    newId(),
    () => silentLog,
  )
  const body = reply.body as string
  const head = [
    `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status]}`,
    `Content-Type: ${reply.contentType}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ]
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`)
}

/** node:http, or node:https with `tls` (TLS 1.3 only unless the material says 1.2). */
export function nodeTransport(tls?: TlsMaterial): Transport {
  const server = tls ? createTlsServer({ ...tls, maxHeaderSize: HEADER_LIMIT_BYTES }) : createServer({ maxHeaderSize: HEADER_LIMIT_BYTES })
  server.keepAliveTimeout = 10_000
  server.on('clientError', answerUnparsable)
  return {
    name: 'node',
    description: tls
      ? `node:https (Node ${process.version}), ${tls.minVersion === 'TLSv1.3' ? 'TLS 1.3 only' : 'TLS 1.2 and 1.3'}`
      : `node:http (Node ${process.version})`,
    listen(host, port, onExchange) {
      server.on('request', (req, res) => {
        onExchange(exchangeOf(req, res))
      })
      return new Promise((resolve, reject) => {
        const failed = (error: NodeJS.ErrnoException) => {
          reject(new Error(`cannot listen on ${host}:${port}: ${error.code === 'EADDRINUSE' ? 'the address is in use' : error.message}`))
        }
        server.once('error', failed)
        server.listen({ host, port, exclusive: true }, () => {
          server.off('error', failed)
          resolve((server.address() as { port: number }).port)
        })
      })
    },
    stopListening() {
      server.close()
      server.closeIdleConnections()
    },
    closeConnections() {
      server.closeAllConnections()
    },
  }
}
