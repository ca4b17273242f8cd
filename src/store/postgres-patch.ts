// Whether the installed postgres.js carries palmvein's fixes (scripts/patch-postgres.mjs, run on
// install): without the nextWrite guard, a connection lost under a transaction throws from a
// setImmediate and ends the process; without the resume after COPY, a boot's page read could leave
// a connection stalled. An install with --ignore-scripts skips them; the service then says so at start.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const MARKERS = ['/* palmvein: nextWrite guard */', '/* palmvein: resume after COPY */']

/** The ES module build, which this package imports. */
export function postgresIsPatched(): boolean {
  const entry = createRequire(import.meta.url).resolve('postgres')
  // The CommonJS entry is cjs/src/index.js; the ES build sits in src/ beside cjs/.
  const root = path.resolve(path.dirname(entry), '..', '..')
  const files = [path.join(root, 'src', 'connection.js'), path.join(root, 'cjs', 'src', 'connection.js')]
  return files.every((file) => MARKERS.every((marker) => readFileSync(file, 'utf8').includes(marker)))
}
