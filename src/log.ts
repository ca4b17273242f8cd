// Structured logs (pino). Bodies are never logged; the redaction list is a second line of defence
// so that keys, tokens, secrets and templates cannot reach a log line by accident.
import { pino, type Logger } from 'pino'
import type { Config } from './config.js'

export const REDACTED_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'device_token',
  '*.device_token',
  'api_key',
  '*.api_key',
  'identify_capture',
  '*.identify_capture',
  'enroll_capture',
  '*.enroll_capture',
  'template',
  '*.template',
  'masterKey',
  '*.masterKey',
]

/** `toStderr`: for CLI commands whose stdout is their result. */
export function createLogger(config: Pick<Config, 'logLevel'>, toStderr = false): Logger {
  const options = { level: config.logLevel, base: { service: 'palmvein' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }
  return toStderr ? pino(options, pino.destination(2)) : pino(options)
}
