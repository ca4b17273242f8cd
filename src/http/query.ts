// The query string, decoded strictly: URLSearchParams would turn bad percent-encoding or invalid
// UTF-8 into U+FFFD and let NUL through, so a mangled value could reach a filter unnoticed.
import { ServiceError } from '../errors.js'

function decode(component: string): string {
  let value: string
  try {
    value = decodeURIComponent(component.replace(/\+/g, ' '))
  } catch {
    throw new ServiceError('invalid_request', 'query: malformed percent-encoding or invalid UTF-8')
  }
  if (value.includes('\0')) throw new ServiceError('invalid_request', 'query: NUL characters are not allowed')
  return value
}

/** Name → value (the last of a repeated name wins, as before); throws invalid_request when malformed. */
export function parseQuery(raw: string): Record<string, string> {
  // A Map, then fromEntries: a `__proto__` name becomes a plain own property.
  const query = new Map<string, string>()
  for (const pair of raw.split('&')) {
    if (pair === '') continue
    const equals = pair.indexOf('=')
    const name = decode(equals < 0 ? pair : pair.slice(0, equals))
    query.set(name, equals < 0 ? '' : decode(pair.slice(equals + 1)))
  }
  return Object.fromEntries(query)
}
