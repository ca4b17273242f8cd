// URL rules for webhook subscriptions, applied on create, on update and again before every
// attempt: HTTPS only (plain HTTP only to localhost with WEBHOOK_ALLOW_LOCALHOST, never in
// production), no credentials in the URL, and every address the host resolves to must be
// public. The caller connects to the returned address, so a second DNS answer cannot differ
// from the one that was checked (DNS rebinding).
import dns from 'node:dns/promises'
import net from 'node:net'
import { ServiceError } from '../errors.js'
import { classifyAddress } from './address-policy.js'

/** Resolves a hostname to its IP addresses (IPv4 and IPv6). Injectable for tests. */
export type Resolver = (hostname: string) => Promise<string[]>

export const systemResolver: Resolver = async (hostname) => (await dns.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

export interface UrlPolicy {
  /** WEBHOOK_ALLOW_LOCALHOST: lets localhost, 127.0.0.1 and [::1] through (never in production). */
  allowLocalhost: boolean
  production: boolean
}

export interface CheckedTarget {
  url: URL
  /** The hostname without IPv6 brackets. */
  hostname: string
  /** The checked address the connection must go to. */
  address: string
  family: 4 | 6
}

export interface SsrfGuard {
  /** Syntactic rules only (scheme, credentials, localhost); throws webhook_url_rejected. */
  parse(raw: string): URL
  /** All rules, resolving the host; throws webhook_url_rejected. */
  check(raw: string | URL): Promise<CheckedTarget>
}

const LOCAL_NAMES = new Set(['localhost', 'localhost.', '127.0.0.1', '[::1]'])
const MAX_URL_LENGTH = 2048

const reject = (detail: string): ServiceError => new ServiceError('webhook_url_rejected', detail)

function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

export function createSsrfGuard(options: { policy: UrlPolicy; resolver?: Resolver }): SsrfGuard {
  const resolver = options.resolver ?? systemResolver
  const localhostAllowed = options.policy.allowLocalhost && !options.policy.production

  function parse(raw: string): URL {
    if (typeof raw !== 'string' || raw.length === 0) throw reject('url must be an absolute https URL')
    if (raw.length > MAX_URL_LENGTH) throw reject(`url must be at most ${MAX_URL_LENGTH} characters`)
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw reject('url is not a valid absolute URL')
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw reject('url must use https')
    if (url.username || url.password) throw reject('url must not contain credentials')
    if (!url.hostname) throw reject('url has no host')
    const local = LOCAL_NAMES.has(url.hostname)
    if (url.protocol === 'http:' && !(local && localhostAllowed)) {
      throw reject(local ? 'http to localhost needs WEBHOOK_ALLOW_LOCALHOST (refused in production)' : 'url must use https')
    }
    return url
  }

  async function resolve(hostname: string): Promise<string[]> {
    if (net.isIP(hostname)) return [hostname]
    let addresses: string[]
    try {
      addresses = await resolver(hostname)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw reject(`host ${hostname} could not be resolved${code ? ` (${code})` : ''}`)
    }
    if (addresses.length === 0) throw reject(`host ${hostname} could not be resolved`)
    return addresses
  }

  async function check(raw: string | URL): Promise<CheckedTarget> {
    const url = parse(typeof raw === 'string' ? raw : raw.href)
    const hostname = bareHost(url)
    const local = LOCAL_NAMES.has(url.hostname)
    const addresses = await resolve(hostname)
    for (const address of addresses) {
      const category = classifyAddress(address)
      if (category === null) continue
      if (category === 'loopback' && local && localhostAllowed) continue
      const loopbackHint = category === 'loopback' && local ? ' (set WEBHOOK_ALLOW_LOCALHOST outside production)' : ''
      throw reject(
        net.isIP(hostname) ? `url points to a ${category} address${loopbackHint}` : `host ${hostname} resolves to a ${category} address${loopbackHint}`,
      )
    }
    // Prefer IPv4: loopback receivers and many hosts listen on IPv4 only.
    const address = addresses.find((candidate) => net.isIPv4(candidate)) ?? addresses[0]
    return { url, hostname, address, family: net.isIPv4(address) ? 4 : 6 }
  }

  return { parse, check }
}
