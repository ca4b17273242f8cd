// The node:http transport: what serves where no uWebSockets.js build loads (Node 22+ on glibc
// older than 2.38). Same exchange as uWS: the body capped while read, backpressure on streams,
// aborts seen when the client goes away before the answer is complete.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
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
        // Answer now and close the connection after the answer rather than read the rest.
        res.shouldKeepAlive = false
        req.removeAllListeners('data')
        req.pause()
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
  const aborted = new Promise<void>((resolve) => { onAbort = resolve })
  // The response closing before it finished: the client went away.
  res.on('close', () => { if (!res.writableFinished) { isAborted = true; onAbort() } })
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

export function nodeTransport(): Transport {
  const server = createServer({ keepAliveTimeout: 10_000 })
  return {
    name: 'node',
    description: `node:http (Node ${process.version})`,
    listen(host, port, onExchange) {
      server.on('request', (req, res) => { onExchange(exchangeOf(req, res)) })
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
