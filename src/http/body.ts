// The JSON request body: the 1 MiB cap (enforced by each transport while reading), the content
// type checked before parsing.
import { ServiceError } from '../errors.js'
import { checkJsonText } from './json-text.js'

export const BODY_LIMIT_BYTES = 1024 * 1024

export const bodyTooLarge = () => new ServiceError('payload_too_large', `the request body exceeds ${BODY_LIMIT_BYTES} bytes`)

// Fatal: a byte sequence that is not UTF-8 is refused instead of becoming U+FFFD in stored text.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

function isJson(contentType: string): boolean {
  const mediaType = contentType.split(';')[0].trim().toLowerCase()
  return mediaType === 'application/json' || mediaType.endsWith('+json')
}

/** The parsed body ({} when empty); throws a ServiceError for a wrong type or malformed JSON. */
export function parseJsonBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return {}
  if (!isJson(contentType)) {
    throw new ServiceError('unsupported_media_type', `the body must be application/json, not "${contentType || 'none'}"`)
  }
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    throw new ServiceError('invalid_request', 'the body is not valid UTF-8')
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ServiceError('invalid_request', 'the body is not valid JSON')
  }
  checkJsonText(value)
  return value
}
