// The uWebSockets.js transport. The HttpRequest dies after the callback, so everything is read at
// once: headers, and the body (onData must be attached before returning); onAborted is attached
// first; every write after an await checks `aborted` and happens inside res.cork().
import { STATUS_CODES } from 'node:http'
import { BODY_LIMIT_BYTES, bodyTooLarge } from '../body.js'
import { BODY_METHODS, releaseChunks, type Exchange, type ResponseHead, type Transport } from '../exchange.js'
import type { HttpRequest, HttpResponse, us_listen_socket } from '@trufflesuite/uws-js-unofficial'
import type { UwsModule } from './uws-build.js'
import pino from 'pino'
import { newId } from '../../ids.js'
import { problemReply } from '../problem.js'
import { framingError } from '../request-framing.js'
import type { ServiceError } from '../../errors.js'

const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
/** ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT (a const enum in the typings, 1 in every build). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1

function readBody(res: HttpResponse): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let failed = false
    res.onData((chunk, isLast) => {
      if (failed) return
      size += chunk.byteLength
      if (size > BODY_LIMIT_BYTES) {
        failed = true
        return reject(bodyTooLarge())
      }
      // uWS reuses the chunk's memory after the callback: copy it.
      chunks.push(Buffer.from(chunk.slice(0)))
      if (isLast) resolve(Buffer.concat(chunks, size))
    })
  })
}

function writeHead(res: HttpResponse, head: ResponseHead) {
  res.writeStatus(statusLine(head.status))
  for (const [name, value] of Object.entries(head.headers)) res.writeHeader(name, value)
}

const silentLog = pino({ level: 'silent' })

/** A head refused before any route runs (request-framing.ts): answered, then the connection closed. */
function refuseHead(res: HttpResponse, error: ServiceError) {
  const reply = problemReply(error, newId(), () => silentLog)
  res.onAborted(() => {})
  res.cork(() => {
    res.writeStatus(statusLine(reply.status))
    res.writeHeader('Content-Type', reply.contentType!)
    res.end(reply.body as string, true)
  })
}

function exchangeOf(res: HttpResponse, req: HttpRequest, fields: ReadonlyArray<readonly [string, string]>): Exchange {
  const state = { aborted: false }
  let onAbort!: () => void
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve
  })
  res.onAborted(() => {
    state.aborted = true
    onAbort()
  })
  const method = req.getMethod().toUpperCase()
  const headers: Record<string, string> = Object.fromEntries(fields)
  const isHead = method === 'HEAD'
  return {
    method,
    path: req.getUrl(),
    remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
    query: req.getQuery() ?? '',
    headers,
    body: BODY_METHODS.has(method) ? readBody(res) : Promise.resolve(Buffer.alloc(0)),
    aborted,
    isAborted: () => state.aborted,
    send(head, body) {
      if (state.aborted) return
      res.cork(() => {
        writeHead(res, head)
        if (body === null) res.endWithoutBody(0)
        else if (isHead) res.endWithoutBody(Buffer.byteLength(body))
        else res.end(body)
      })
    },
    async stream(head, chunks) {
      if (state.aborted) return
      res.cork(() => {
        writeHead(res, head)
      })
      try {
        if (isHead) await releaseChunks(chunks)
        else {
          for await (const chunk of chunks) {
            if (state.aborted) return
            let flushed = true
            res.cork(() => {
              flushed = res.write(chunk)
            })
            if (!flushed) {
              await Promise.race([
                aborted,
                new Promise<void>((resolve) => {
                  res.onWritable(() => {
                    resolve()
                    return true
                  })
                }),
              ])
              if (state.aborted) return
            }
          }
        }
        if (!state.aborted)
          res.cork(() => {
            if (isHead) res.endWithoutBody()
            else res.end()
          })
      } catch (error) {
        if (!state.aborted) res.close()
        throw error
      }
    },
  }
}

export function uwsTransport(uws: UwsModule, description: string): Transport {
  const app = uws.App()
  let listenSocket: us_listen_socket | null = null
  return {
    name: 'uws',
    description,
    listen(host, port, onExchange) {
      app.any('/*', (res, req) => {
        // Every field, repeats included: the framing checks need to see a second Content-Length.
        const fields: Array<[string, string]> = []
        req.forEach((name, value) => {
          fields.push([name, value])
        })
        const refused = framingError(fields)
        if (refused) return refuseHead(res, refused)
        onExchange(exchangeOf(res, req, fields))
      })
      return new Promise((resolve, reject) => {
        // Exclusive: a second server on the same port must fail, not split the traffic with the first.
        ;(app as unknown as { listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): void }).listen(
          host,
          port,
          LIBUS_LISTEN_EXCLUSIVE_PORT,
          (socket) => {
            if (!socket) return reject(new Error(`cannot listen on ${host}:${port}: the address is in use or not available`))
            listenSocket = socket
            resolve(uws.us_socket_local_port(socket as never))
          },
        )
      })
    },
    stopListening() {
      if (listenSocket) uws.us_listen_socket_close(listenSocket)
      listenSocket = null
    },
    closeConnections() {
      // Not in the bundled typings, but present since uWS v20.16: closes every remaining socket.
      ;(app as unknown as { close(): void }).close()
    },
  }
}
