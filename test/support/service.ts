// Boot the real service (HTTP on port 0) on a fresh database, and talk to it like a client would.
import { expect } from 'vitest'
import { loadLocalIssuer } from '../../src/auth/identity-tokens.js'
import type { Config } from '../../src/config.js'
import { start, type Service } from '../../src/server.js'
import { createTestStorage, type TestStorage } from './database.js'

export interface Response<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface RequestOptions {
  /** Bearer credential (token, API key or device token). */
  auth?: string
  body?: unknown
  /** Sent as is (for malformed-JSON tests). */
  rawBody?: string | Buffer
  headers?: Record<string, string>
}

export interface TestService {
  url: string
  service: Service
  storage: TestStorage
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>
  /** A signed identity token from the local development issuer. */
  token(subject: string, ttlSeconds?: number): Promise<string>
  /** Stop the service only (the storage stays, for restart tests). */
  stop(): Promise<void>
  /** Start the service again on the same storage. */
  restart(config?: Partial<Config>): Promise<void>
  close(): Promise<void>
}

export function serviceConfig(storage: TestStorage, config: Partial<Config> = {}): Partial<Config> {
  return {
    port: 0,
    host: '127.0.0.1',
    databaseUrl: storage.databaseUrl,
    dataDir: storage.dataDir,
    logLevel: 'silent',
    matcherThreads: 1,
    webhookWorker: false,
    metrics: { host: '127.0.0.1', port: 0 },
    ...config,
  }
}

export async function request<T = any>(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.auth) headers.authorization = `Bearer ${options.auth}`
  let body: string | Buffer | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await fetch(baseUrl + path, { method, headers, body })
  const text = await response.text()
  let parsed: unknown = text
  if (/[/+]json\b/.test(response.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text)
  return { status: response.status, headers: response.headers, body: parsed as T, text }
}

export async function bootService(options: { config?: Partial<Config>; storage?: TestStorage } = {}): Promise<TestService> {
  const storage = options.storage ?? (await createTestStorage())
  let service = await start({ config: serviceConfig(storage, options.config) })
  const issuer = await loadLocalIssuer({ dataDir: storage.dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
  const handle: TestService = {
    get url() {
      return service.url
    },
    get service() {
      return service
    },
    storage,
    request: (method, path, requestOptions) => request(service.url, method, path, requestOptions),
    token: (subject, ttlSeconds = 3600) => issuer.sign(subject, ttlSeconds),
    stop: () => service.close(),
    async restart(config) {
      await service.close()
      service = await start({ config: serviceConfig(storage, { ...options.config, ...config }) })
    },
    async close() {
      await service.close()
      if (!options.storage) await storage.cleanup()
    },
  }
  return handle
}

/** A failing assertion prints the response: `expectStatus(res, 200)`. */
export function expectStatus(response: Response, status: number, label?: string): void {
  if (response.status !== status) {
    throw new Error(`${label ? `${label}: ` : ''}expected ${status}, received ${response.status}: ${response.text.slice(0, 2000)}`)
  }
}

/** A problem+json answer with this status and error code; `label` names the request in a failure. */
export function expectProblem(response: Response, status: number, code: string, label?: string): void {
  expectStatus(response, status, label)
  expect(response.headers.get('content-type'), label).toMatch(/^application\/problem\+json/)
  expect(response.body.code, label).toBe(code)
}
