// Where one request ends and the next begins must never be in doubt: a request whose body length
// two proxies could read differently (two Content-Length headers, or one with Transfer-Encoding)
// is the request-smuggling shape, refused with 400 and the connection closed. node:http's parser
// refuses these itself (clientError); uWebSockets.js 20.30 takes the first Content-Length, so its
// adapter checks every header it sees (req.forEach includes repeats) with this before anything runs.
import { ServiceError } from '../errors.js'

/**
 * The largest request head served (request line excluded): node:http's default maxHeaderSize, and
 * what the uWS adapter enforces itself. uWS's own parser resets the connection past about 128 KiB.
 */
export const HEADER_LIMIT_BYTES = 16 * 1024

/** Why this request's head cannot be served, or null. `headers` lists every field, repeats included. */
export function framingError(headers: ReadonlyArray<readonly [string, string]>): ServiceError | null {
  let bytes = 0
  let lengths = 0
  let transferEncoding = false
  for (const [name, value] of headers) {
    // As on the wire: "name: value\r\n".
    bytes += name.length + value.length + 4
    if (name === 'content-length') {
      lengths += 1
      if (!/^\d{1,15}$/.test(value.trim())) return new ServiceError('invalid_request', 'Content-Length must be one decimal number')
    } else if (name === 'transfer-encoding') transferEncoding = true
  }
  if (bytes > HEADER_LIMIT_BYTES) return new ServiceError('header_fields_too_large', `the request's header fields exceed ${HEADER_LIMIT_BYTES} bytes`)
  if (lengths > 1) return new ServiceError('invalid_request', 'the request has more than one Content-Length header')
  if (lengths === 1 && transferEncoding) return new ServiceError('invalid_request', 'the request has both Content-Length and Transfer-Encoding')
  return null
}
