// One delivery attempt over HTTP: re-check the URL (resolving its host), connect to exactly the
// address that was checked, POST the signed body, read at most 100 KB of the answer, never
// follow redirects, and give up after the configured total time. Never throws: every failure
// becomes an outcome with an error message and no status.
import fs from 'node:fs'
import tls from 'node:tls'
import type { LookupFunction } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Agent } from 'undici'
import { ServiceError } from '../errors.js'
import type { SsrfGuard } from './ssrf-guard.js'
import { undici } from '../runtime/undici-on-demand.js'

export const RESPONSE_BODY_LIMIT = 100 * 1024

export interface AttemptRequest {
  url: string
  body: string
  headers: Record<string, string>
}

export interface AttemptOutcome {
  /** 2xx answered within the time limit. */
  success: boolean
  status: number | null
  body: string | null
  error: string | null
  durationMs: number
  /** The raw Retry-After header, if any. */
  retryAfter: string | null
}

export interface HttpSender {
  send(attempt: AttemptRequest): Promise<AttemptOutcome>
}

export interface HttpSenderOptions {
  guard: SsrfGuard
  timeoutMs: number
  /** Extra trusted CA (PEM), added to Node's bundled roots. */
  caPem?: string | null
}

/** Reads the extra CA for deliveries (config.webhookCaFile), failing at boot if unreadable. */
export function loadCaPem(file: string | null): string | null {
  return file ? fs.readFileSync(file, 'utf8') : null
}

class Timeout extends Error {}

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }) as unknown as LookupFunction
}

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof Timeout) return `timed out after ${timeoutMs} ms`
  if (error instanceof ServiceError) return `url rejected: ${error.detail}`
  const err = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException }
  const inner = err?.cause && typeof err.cause === 'object' ? err.cause : err
  const code = inner?.code ?? err?.code
  const message = inner?.message ?? String(error)
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)'
  return code && !message.includes(code) ? `${message} (${code})` : message
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const room = RESPONSE_BODY_LIMIT - size
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk)
    size += Math.min(chunk.length, room)
    if (size >= RESPONSE_BODY_LIMIT) {
      body.destroy()
      break
    }
  }
  // stream: true drops a multi-byte character cut at the limit; PostgreSQL text refuses NUL.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character removed
  return new TextDecoder('utf-8').decode(Buffer.concat(chunks), { stream: true }).replace(/\u0000/g, '')
}

export function createHttpSender(options: HttpSenderOptions): HttpSender {
  const ca = options.caPem ? [...tls.rootCertificates, options.caPem] : undefined
  const timeoutMs = options.timeoutMs

  async function send(attempt: AttemptRequest): Promise<AttemptOutcome> {
    const started = performance.now()
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, fail) => {
      timer = setTimeout(() => {
        controller.abort()
        fail(new Timeout())
      }, timeoutMs)
    })
    deadline.catch(() => {})
    let agent: Agent | undefined
    let status: number | null = null
    let retryAfter: string | null = null
    let body: string | null = null
    let error: string | null = null
    try {
      const target = await Promise.race([options.guard.check(attempt.url), deadline])
      const { Agent, request } = await undici()
      agent = new Agent({
        // undici's own timers are a backstop only: our total timer (above) always fires first, so a
        // timeout is always recorded the same way.
        connect: { lookup: pinnedLookup(target.address, target.family), ca, timeout: timeoutMs + 1_000 },
        headersTimeout: timeoutMs + 1_000,
        bodyTimeout: timeoutMs + 1_000,
        keepAliveTimeout: 1,
      })
      const response = await Promise.race([
        request(target.url, { method: 'POST', headers: attempt.headers, body: attempt.body, dispatcher: agent, signal: controller.signal }),
        deadline,
      ])
      status = response.statusCode
      const header = response.headers['retry-after']
      retryAfter = Array.isArray(header) ? (header[0] ?? null) : (header ?? null)
      try {
        body = await Promise.race([readLimited(response.body), deadline])
      } catch (readError) {
        // The status arrived in time; a body that stalls or breaks is noted, not fatal.
        response.body.destroy()
        error = `response body not read: ${describeError(readError, timeoutMs)}`
      }
      if (status >= 300 && status < 400) error = 'redirect not followed'
    } catch (failure) {
      error = describeError(failure, timeoutMs)
    } finally {
      clearTimeout(timer)
      agent?.destroy().catch(() => {})
    }
    return {
      success: status !== null && status >= 200 && status < 300,
      status,
      body,
      error,
      durationMs: Math.round(performance.now() - started),
      retryAfter,
    }
  }

  return { send }
}
