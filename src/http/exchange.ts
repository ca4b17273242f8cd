// What the request discipline needs from an HTTP server, whichever one runs (uWebSockets.js or
// node:http): one request read up front, and the ways to answer it.

/** Status line and headers of an answer (Content-Type and X-Request-Id included). */
export interface ResponseHead {
  status: number
  headers: Record<string, string>
}

export interface Exchange {
  /** Upper-case, as received (HEAD included). */
  readonly method: string
  /** The path, still percent-encoded, without the query string. */
  readonly path: string
  /** The raw query string, without the `?`. */
  readonly query: string
  /** The peer's IP address (the proxy's, behind one). */
  readonly remoteAddress: string
  /** Every request header, names in lower case. */
  readonly headers: Readonly<Record<string, string>>
  /** The body as sent (empty for methods without one); rejects with payload_too_large past 1 MiB. */
  readonly body: Promise<Buffer>
  /** Resolves when the client has gone away. */
  readonly aborted: Promise<void>
  isAborted(): boolean
  /** A complete answer; on HEAD the body's length is announced and the body left out. */
  send(head: ResponseHead, body: string | Buffer | null): void
  /**
   * A chunked answer with backpressure. Resolves when sent or when the client left; if the source
   * fails after the status line went out, the connection is cut and the error rethrown.
   */
  stream(head: ResponseHead, chunks: AsyncIterable<string | Buffer>): Promise<void>
}

export interface Transport {
  readonly name: 'uws' | 'node'
  /** Which build or module serves, for the boot log and /healthz. */
  readonly description: string
  /** Resolves to the bound port; rejects with a clear error when the port is taken. */
  listen(host: string, port: number, onExchange: (exchange: Exchange) => void): Promise<number>
  /** Stop accepting connections; connections in use stay open. */
  stopListening(): void
  /** Close every remaining connection. */
  closeConnections(): void
}

/** A HEAD answer sends no body: let the source release what it holds (a database cursor). */
export async function releaseChunks(chunks: AsyncIterable<string | Buffer>): Promise<void> {
  await chunks[Symbol.asyncIterator]().return?.()
}

/** Methods whose request body is read (and capped); others' bodies are ignored. */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH'])
