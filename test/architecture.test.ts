// The layering rule, read from the imports of src/ and written as the plan reads: an ordered table of
// layers, top to bottom. A file may import from its own layer or any layer below it, never from one
// above; every file of src/ belongs to exactly one layer (a loose root file is a failure, so no import
// can go round the rule through the root); no two files import each other, directly or round a loop;
// and SQL, recognised by its text whatever the tag is called, lives only in the store.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../src')
const MATCHER_PACKAGE = path.resolve(import.meta.dirname, '../packages/matcher')

/**
 * The layers, top to bottom. A pattern is a folder of src/ (ending in '/') or a root file (a '*'
 * matches any run of characters). Why this order:
 * - cli and the composition root (server, the library entry index, the boot wait) wire everything;
 * - http turns requests into calls; app-context is the set of long-lived resources it hands to routes;
 * - cluster drives the galleries across nodes (leases, scatter-gather), so it stands above domain;
 * - domain holds the business rules, in folders by concern;
 * - auth (credentials, route access, rate limits) and webhooks (outbox, delivery) serve domain;
 * - keys is the crypto several layers need (keyring, master keys, template and secret sealing);
 * - store holds every SQL statement and the database engine;
 * - leaves are shared by all (runtime/ is the process's own memory and on-demand modules); the
 *   matcher imports nothing of the service.
 */
const LAYERS: Array<{ layer: string; holds: string[] }> = [
  { layer: 'cli', holds: ['cli/'] },
  { layer: 'server', holds: ['index.ts', 'server.ts'] },
  { layer: 'http', holds: ['http/'] },
  { layer: 'app-context', holds: ['app-context.ts'] },
  { layer: 'cluster', holds: ['cluster/'] },
  { layer: 'domain', holds: ['domain/'] },
  { layer: 'auth, webhooks', holds: ['auth/', 'webhooks/'] },
  { layer: 'keys', holds: ['keys/'] },
  { layer: 'store', holds: ['store/'] },
  { layer: 'leaves', holds: ['config.ts', 'log.ts', 'errors.ts', 'ids.ts', 'plans.ts', 'version.ts', 'health.ts', 'metrics/', 'runtime/'] },
  { layer: 'matcher', holds: ['matcher/'] },
]
const MATCHER = LAYERS.length - 1

/** The rank of a file in LAYERS (0 = top), or -1 where no layer holds it. */
function rankOf(file: string): number {
  if (file.startsWith(MATCHER_PACKAGE + path.sep)) return MATCHER
  const relative = path.relative(SRC, file).split(path.sep).join('/')
  return LAYERS.findIndex(({ holds }) =>
    holds.some((pattern) =>
      pattern.endsWith('/') ? relative.startsWith(pattern) : new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`).test(relative),
    ),
  )
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return /\.(ts|mts|mjs)$/.test(entry.name) ? [full] : []
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

/** The relative ones and the matcher package: the edges the layering rule reads. */
const importsOf = (source: string) => specifiersOf(source).filter((specifier) => specifier.startsWith('.') || /^@?palmvein\/matcher(\/|$)/.test(specifier))

/** The file a specifier names: a .js specifier names the .ts source beside it. */
function resolve(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return path.join(MATCHER_PACKAGE, 'index.ts')
  const target = path.resolve(path.dirname(from), specifier)
  const source = target.replace(/\.js$/, '.ts')
  return fs.existsSync(source) ? source : target
}

const files = sourceFiles(SRC)
const edges = files.flatMap((file) => importsOf(fs.readFileSync(file, 'utf8')).map((specifier) => ({ from: file, to: resolve(file, specifier) })))
const name = (file: string) => path.relative(SRC, file).split(path.sep).join('/')
const show = ({ from, to }: { from: string; to: string }) => `${name(from)} -> ${name(to)}`

/** Files that import each other round a loop (strongly connected components of more than one file). */
function circles(): string[][] {
  const next = new Map<string, string[]>()
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to])
  const index = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    onStack = new Set<string>()
  const found: string[][] = []
  let counter = 0
  const visit = (file: string) => {
    index.set(file, counter)
    low.set(file, counter)
    counter++
    stack.push(file)
    onStack.add(file)
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(file, Math.min(low.get(file)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!))
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== file)
      if (component.length > 1) found.push(component.map(name).sort())
    }
  }
  for (const file of files) if (!index.has(file)) visit(file)
  return found
}

/** A template literal that opens with an SQL statement, whatever tag (or none) stands before it. */
const STATEMENT = new RegExp(
  '`\\s*(' +
    [
      'SELECT\\s',
      'INSERT\\s+INTO\\s',
      'UPDATE\\s+\\S+\\s+SET\\s',
      'DELETE\\s+FROM\\s',
      'WITH\\s+(RECURSIVE\\s+)?\\w+\\s+AS\\b',
      '(CREATE|ALTER|DROP|TRUNCATE|COPY|GRANT|REVOKE|LOCK|VACUUM|ANALYZE|LISTEN|UNLISTEN|NOTIFY)\\s+[A-Z"${]',
      '(BEGIN|COMMIT|ROLLBACK|SAVEPOINT)\\b',
      'SET\\s+(LOCAL\\s|SESSION\\s|\\w+\\s*(=|TO\\s))',
      'SHOW\\s+\\w',
    ].join('|') +
    ')|\\.unsafe\\(',
)
const sqlOf = (source: string) => STATEMENT.test(source)

describe('architecture: the layering rule', () => {
  it('reads the imports of src/ (a sanity check of the reader itself)', () => {
    expect(edges.length).toBeGreaterThan(200)
    expect(
      importsOf(
        "import { a } from './a.js'\nexport { b } from '../b.js'\nimport type {\n  C,\n} from './c.js'\nimport { e } from '@palmvein/matcher'\nconst d = await import('./d.js')",
      ),
    ).toEqual(['./a.js', '../b.js', './c.js', '@palmvein/matcher', './d.js'])
  })

  it('places files as the table says', () => {
    const at = (relative: string) => LAYERS[rankOf(path.join(SRC, relative))]?.layer
    expect([
      at('cli/import.ts'),
      at('server.ts'),
      at('http/routes/members.ts'),
      at('domain/galleries/registry.ts'),
      at('keys/keyring.ts'),
      at('errors.ts'),
      at('matcher/gallery.ts'),
      at('loose.ts'),
    ]).toEqual(['cli', 'server', 'http', 'domain', 'keys', 'leaves', 'matcher', undefined])
    expect(LAYERS[rankOf(path.join(MATCHER_PACKAGE, 'src/gallery.ts'))].layer).toBe('matcher')
  })

  it('every file of src/ belongs to a layer (nothing loose at the root to import through)', () => {
    expect(files.filter((file) => rankOf(file) === -1).map(name)).toEqual([])
  })

  it('no import runs up the table', () => {
    const upward = edges.filter(({ from, to }) => rankOf(to) !== -1 && rankOf(from) !== -1 && rankOf(to) < rankOf(from))
    expect(upward.map((edge) => `${show(edge)} (${LAYERS[rankOf(edge.from)].layer} -> ${LAYERS[rankOf(edge.to)].layer})`)).toEqual([])
  })

  it('the matcher imports nothing outside itself', () => {
    const outside = edges.filter(({ from, to }) => rankOf(from) === MATCHER && rankOf(to) !== MATCHER)
    expect(outside.map(show)).toEqual([])
  })

  it('the matcher package imports only Node built-ins, piscina and its own files', () => {
    const outside = sourceFiles(path.join(MATCHER_PACKAGE, 'src')).flatMap((file) =>
      specifiersOf(fs.readFileSync(file, 'utf8'))
        .filter((specifier) =>
          specifier.startsWith('.')
            ? !path.resolve(path.dirname(file), specifier).startsWith(path.join(MATCHER_PACKAGE, 'src') + path.sep)
            : !specifier.startsWith('node:') && specifier !== 'piscina',
        )
        .map((specifier) => `${path.relative(MATCHER_PACKAGE, file)} -> ${specifier}`),
    )
    expect(outside).toEqual([])
  })

  it('the service reaches the matcher only by @palmvein/matcher and its exports, and store not at all', () => {
    const exported = Object.keys(JSON.parse(fs.readFileSync(path.join(MATCHER_PACKAGE, 'package.json'), 'utf8')).exports).map((subpath) =>
      subpath === '.' ? '@palmvein/matcher' : `@palmvein/matcher/${subpath.slice(2)}`,
    )
    const wrong = sourceFiles(SRC).flatMap((file) =>
      specifiersOf(fs.readFileSync(file, 'utf8'))
        .filter((specifier) =>
          specifier.startsWith('.')
            ? path.resolve(path.dirname(file), specifier).startsWith(path.resolve(SRC, '../packages') + path.sep)
            : specifier.startsWith('@palmvein/matcher') && (!exported.includes(specifier) || path.relative(SRC, file).startsWith('store/')),
        )
        .map((specifier) => `${path.relative(SRC, file)} -> ${specifier}`),
    )
    expect(exported.length).toBeGreaterThan(1)
    expect(wrong).toEqual([])
  })

  it('no files import each other round a circle', () => {
    expect(circles()).toEqual([])
  })

  it('recognises SQL by its text, whatever the tag is called', () => {
    expect(
      [
        'db`SELECT 1 FROM t`',
        'run(`\n  INSERT INTO t VALUES (1)`)',
        'q`UPDATE t SET a = ${a}`',
        'x.unsafe(text)',
        '`DELETE FROM t`',
        '`WITH a AS (SELECT 1) SELECT * FROM a`',
        '`CREATE TABLE t (a int)`',
      ].filter((text) => !sqlOf(text)),
    ).toEqual([])
    expect(['`Select an environment`', '`DELETE ${path} answers 404`', '`WITH ${count} members`', 'log.info(`SET to ${value}`)'].filter(sqlOf)).toEqual([])
  })

  it('SQL statements live only in src/store', () => {
    const store = LAYERS.findIndex(({ layer }) => layer === 'store')
    const outside = files.filter((file) => rankOf(file) !== store && sqlOf(fs.readFileSync(file, 'utf8')))
    expect(outside.map(name)).toEqual([])
  })
})
