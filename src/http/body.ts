// Read a JSON body from uWS: chunks are copied (uWS reuses their memory after the callback), the
// 1 MiB cap is enforced while reading, and the content type is checked before parsing.
import { ServiceError } from '../errors.js'
import type { HttpResponse } from './uws.js'

export const BODY_LIMIT_BYTES = 1024 * 1024

function isJson(contentType: string): boolean {
  const mediaType = contentType.split(';')[0].trim().toLowerCase()
  return mediaType === 'application/json' || mediaType.endsWith('+json')
}

/**
 * Resolves to the parsed body ({} when the body is empty), or rejects with a ServiceError.
 * `expectsBody` false: the body is drained and ignored.
 */
export function readJsonBody(res: HttpResponse, contentType: string, expectsBody: boolean): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let failed = false
    res.onData((chunk, isLast) => {
      if (failed) return
      size += chunk.byteLength
      if (size > BODY_LIMIT_BYTES) {
        failed = true
        reject(new ServiceError('payload_too_large', `the request body exceeds ${BODY_LIMIT_BYTES} bytes`))
        return
      }
      if (expectsBody) chunks.push(Buffer.from(chunk.slice(0)))
      if (!isLast) return
      if (!expectsBody || size === 0) return resolve({})
      if (!isJson(contentType)) {
        return reject(new ServiceError('unsupported_media_type', `the body must be application/json, not "${contentType || 'none'}"`))
      }
      try {
        resolve(JSON.parse(Buffer.concat(chunks, size).toString('utf8')))
      } catch {
        reject(new ServiceError('invalid_request', 'the body is not valid JSON'))
      }
    })
  })
}
