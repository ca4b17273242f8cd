// What a parsed JSON body may hold before it reaches a handler: text that is text (no NUL, which
// PostgreSQL cannot store, and no lone surrogates, which would be stored as U+FFFD) and at most
// 32 levels of nesting (deeper values overflow the stack of whoever serialises them again).
import { ServiceError, type FieldError } from '../errors.js'

export const MAX_JSON_DEPTH = 32

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const pointer = (path: Array<string | number>) => '/' + path.map((part) => String(part).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

function textProblem(text: string): string | null {
  if (text.includes('\0')) return 'must not contain NUL (U+0000) characters'
  if (LONE_SURROGATE.test(text)) return 'must not contain lone UTF-16 surrogates (not valid Unicode text)'
  return null
}

/** Throws invalid_request naming the first offending field (a JSON pointer); iterative, so no depth can overflow it. */
export function checkJsonText(value: unknown): void {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }]
  while (stack.length) {
    const { value: current, path } = stack.pop()!
    const fail = (at: Array<string | number>, message: string): never => {
      const error: FieldError = { path: pointer(at), message }
      throw new ServiceError('invalid_request', `body: ${error.path} ${message}`, { errors: [error] })
    }
    if (typeof current === 'string') {
      const problem = textProblem(current)
      if (problem) fail(path, problem)
      continue
    }
    if (current === null || typeof current !== 'object') continue
    if (path.length >= MAX_JSON_DEPTH) fail(path, `nests deeper than ${MAX_JSON_DEPTH} levels`)
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index -= 1) stack.push({ value: current[index], path: [...path, index] })
      continue
    }
    const entries = Object.entries(current)
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [key, child] = entries[index]
      const problem = textProblem(key)
      if (problem) fail([...path, key], `field name ${problem}`)
      stack.push({ value: child, path: [...path, key] })
    }
  }
}
