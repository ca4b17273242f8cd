// Headers on everything the console's origin path serves: a strict Content-Security-Policy (no
// inline script or style, nothing from another origin, never framed), and the usual hardening.
// With OpenID Connect sign-in, the page also talks to the issuer (discovery, the token endpoint):
// that one origin joins connect-src, nothing else.
import type { Config } from '../../config.js'
import { consoleOidc } from './oidc.js'

export function consoleCsp(connectOrigins: string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}

const byConfig = new WeakMap<object, Readonly<Record<string, string>>>()

export function consoleHeaders(config: Pick<Config, 'consoleOidcClientId' | 'jwtIssuer'>): Readonly<Record<string, string>> {
  let headers = byConfig.get(config)
  if (!headers) {
    const oidc = consoleOidc(config)
    headers = {
      'Content-Security-Policy': consoleCsp(oidc ? [new URL(oidc.issuer).origin] : []),
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
    }
    byConfig.set(config, headers)
  }
  return headers
}
