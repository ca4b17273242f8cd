// The layering rule, read from the imports of src/: http on top (routes, wire schemas), then auth,
// domain and webhooks, then store; the matcher stands alone, a package of its own
// (packages/matcher, @palmvein/matcher). A module may import from its own layer or a lower one,
// never upward; the matcher imports nothing of the service, and the service reaches it only by
// its package name and its exports.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '..')
const SRC = path.join(ROOT, 'src')
const MATCHER = path.join(ROOT, 'packages/matcher')
const MATCHER_SRC = path.join(MATCHER, 'src')

/** Top-level folders under src/, with what each may not import. Root files (ids, errors, ...) are shared leaves. */
const FORBIDDEN: Record<string, string[]> = {
  store: ['http', 'domain', 'auth', 'webhooks'],
  domain: ['http'],
  auth: ['http'],
  webhooks: ['http'],
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

/** Specifiers of every static import, re-export and dynamic import. */
function specifiersOf(source: string): string[] {
  const found = new Set<string>()
  for (const match of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'([^']+)'/g)) found.add(match[1])
  for (const match of source.matchAll(/(?:^|\n)\s*import\s+'([^']+)'/g)) found.add(match[1])
  for (const match of source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) found.add(match[1])
  return [...found]
}

/** Relative specifiers only: the edges between the service's own files. */
const importsOf = (source: string) => specifiersOf(source).filter((specifier) => specifier.startsWith('.'))

/** The top-level folder of a file under src/ ('' for a root file). */
const layerOf = (file: string) => {
  const parts = path.relative(SRC, file).split(path.sep)
  return parts.length > 1 ? parts[0] : ''
}

const edges = sourceFiles(SRC).flatMap((file) => importsOf(fs.readFileSync(file, 'utf8'))
  .map((specifier) => ({ from: file, to: path.resolve(path.dirname(file), specifier) })))
const show = ({ from, to }: { from: string; to: string }) => `${path.relative(SRC, from)} -> ${path.relative(SRC, to)}`

describe('architecture: the layering rule', () => {
  it('reads the imports of src/ (a sanity check of the reader itself)', () => {
    expect(edges.length).toBeGreaterThan(200)
    expect(importsOf("import { a } from './a.js'\nexport { b } from '../b.js'\nimport type {\n  C,\n} from './c.js'\nconst d = await import('./d.js')"))
      .toEqual(['./a.js', '../b.js', './c.js', './d.js'])
  })

  it.each(Object.entries(FORBIDDEN))('%s imports nothing from a layer above it', (layer, forbidden) => {
    const upward = edges.filter((edge) => layerOf(edge.from) === layer && forbidden.includes(layerOf(edge.to)))
    expect(upward.map(show)).toEqual([])
  })

  it('the matcher package imports only Node built-ins, piscina and its own files', () => {
    const outside = sourceFiles(MATCHER_SRC).flatMap((file) => specifiersOf(fs.readFileSync(file, 'utf8'))
      .filter((specifier) => specifier.startsWith('.')
        ? !path.resolve(path.dirname(file), specifier).startsWith(MATCHER_SRC + path.sep)
        : !specifier.startsWith('node:') && specifier !== 'piscina')
      .map((specifier) => `${path.relative(MATCHER, file)} -> ${specifier}`))
    expect(outside).toEqual([])
  })

  it('the service reaches the matcher only by @palmvein/matcher and its exports, and store not at all', () => {
    const exported = Object.keys(JSON.parse(fs.readFileSync(path.join(MATCHER, 'package.json'), 'utf8')).exports)
      .map((subpath) => subpath === '.' ? '@palmvein/matcher' : `@palmvein/matcher/${subpath.slice(2)}`)
    const wrong = sourceFiles(SRC).flatMap((file) => specifiersOf(fs.readFileSync(file, 'utf8'))
      .filter((specifier) => specifier.startsWith('.')
        ? path.resolve(path.dirname(file), specifier).startsWith(path.join(ROOT, 'packages') + path.sep)
        : specifier.startsWith('@palmvein/matcher') && (!exported.includes(specifier) || layerOf(file) === 'store'))
      .map((specifier) => `${path.relative(SRC, file)} -> ${specifier}`))
    expect(exported.length).toBeGreaterThan(1)
    expect(wrong).toEqual([])
  })

  it('SQL statements live only in src/store', () => {
    const statement = /\b(sql|tx)(<[^`]*>)?`|\.unsafe\(/
    const outside = sourceFiles(SRC).filter((file) => layerOf(file) !== 'store' && statement.test(fs.readFileSync(file, 'utf8')))
    expect(outside.map((file) => path.relative(SRC, file))).toEqual([])
  })
})
