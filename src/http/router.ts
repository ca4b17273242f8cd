// Finds the route for a method and path, the same way whichever transport serves. A trailing slash
// names the same resource, the singular /v1/project/ answers like /v1/projects/, and HEAD is GET
// without the body. A known path with another method is a 405 whose Allow lists what it takes.
import type { Route } from './route.js'
import { compareCodeUnits } from '../runtime/code-unit-order.js'

export type RouteLookup<T> =
  | { kind: 'route'; target: T; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' }

interface Pattern<T> {
  /** Literal segments as text, parameters as their name prefixed with ':' */
  segments: string[]
  byMethod: Map<string, T>
}

const segmentsOf = (path: string) => path.split('/').slice(1)

/** Paths under /v1/projects/ are also answered under the singular /v1/project/ (the guides use it). */
function canonicalPath(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  return trimmed.startsWith('/v1/project/') ? `/v1/projects/${trimmed.slice('/v1/project/'.length)}` : trimmed
}

export function createRouter<T>(entries: Array<{ route: Route; target: T }>) {
  const patterns: Pattern<T>[] = []
  for (const { route, target } of entries) {
    const segments = segmentsOf(route.path)
    let pattern = patterns.find((known) => known.segments.join('/') === segments.join('/'))
    if (!pattern) patterns.push((pattern = { segments, byMethod: new Map() }))
    pattern.byMethod.set(route.method.toUpperCase(), target)
  }

  // A literal segment wins over a parameter at the same place (/devices/x/enroll/status before /devices/x/enroll/:id).
  const rank = (pattern: Pattern<T>) => pattern.segments.map((segment) => (segment.startsWith(':') ? '1' : '0')).join('')
  patterns.sort((a, b) => compareCodeUnits(rank(a), rank(b)))

  function match(pattern: Pattern<T>, segments: string[]): Record<string, string> | null {
    if (pattern.segments.length !== segments.length) return null
    const params: Record<string, string> = {}
    for (let i = 0; i < segments.length; i += 1) {
      const expected = pattern.segments[i]
      if (expected.startsWith(':')) {
        if (segments[i] === '') return null
        params[expected.slice(1)] = segments[i]
      } else if (expected !== segments[i]) return null
    }
    return params
  }

  const allowOf = (pattern: Pattern<T>) => {
    const methods = [...pattern.byMethod.keys()]
    return methods.includes('GET') ? [...methods, 'HEAD'] : methods
  }

  return {
    lookup(method: string, path: string): RouteLookup<T> {
      const segments = segmentsOf(canonicalPath(path))
      for (const pattern of patterns) {
        const params = match(pattern, segments)
        if (!params) continue
        const target = pattern.byMethod.get(method === 'HEAD' ? 'GET' : method)
        return target ? { kind: 'route', target, params } : { kind: 'method_not_allowed', allow: allowOf(pattern) }
      }
      return { kind: 'not_found' }
    },
  }
}
