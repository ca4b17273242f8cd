// The query string, decoded strictly: URLSearchParams would turn bad percent-encoding or invalid
// UTF-8 into U+FFFD and let NUL through, so a mangled value could reach a filter unnoticed.
import { ServiceError } from '../errors.js'

function refuse(name: string, message: string): ServiceError {
  const path = `/${name}`
  return new ServiceError('invalid_request', `query: ${path} ${message}`, { errors: [{ path, message }] })
}

function decode(component: string, name: string): string {
  let value: string
  try {
    value = decodeURIComponent(component.replace(/\+/g, ' '))
  } catch {
    throw refuse(name, 'has malformed percent-encoding or invalid UTF-8')
  }
  if (value.includes('\0')) throw refuse(name, 'must not contain NUL (U+0000) characters')
  return value
}

/** Name → value (the last of a repeated name wins, as before); throws invalid_request when malformed. */
export function parseQuery(raw: string): Record<string, string> {
  // A Map, then fromEntries: a `__proto__` name becomes a plain own property.
  const query = new Map<string, string>()
  for (const pair of raw.split('&')) {
    if (pair === '') continue
    const equals = pair.indexOf('=')
    const rawName = equals < 0 ? pair : pair.slice(0, equals)
    const name = decode(rawName, rawName)
    query.set(name, equals < 0 ? '' : decode(pair.slice(equals + 1), name))
  }
  return Object.fromEntries(query)
}
