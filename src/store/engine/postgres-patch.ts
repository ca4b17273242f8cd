// Whether the installed postgres.js carries palmvein's fixes (scripts/patch-postgres.mjs, run on
// install): without the nextWrite guard, a connection lost under a transaction throws from a
// setImmediate and ends the process; without the resume after COPY, a boot's page read could leave
// a connection stalled; without the queue compaction, every query of a long-running service gets
// slower (the pool's idle queue grows by a slot per query and each query scans it). An install
// with --ignore-scripts skips them; the service then says so at start.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

/** Each patched file, with the markers its fixes leave. */
const MARKERS: Record<string, string[]> = {
  'connection.js': ['/* palmvein: nextWrite guard */', '/* palmvein: resume after COPY */'],
  'queue.js': ['/* palmvein: queue compaction */'],
}

/** The ES module build, which this package imports. */
export function postgresIsPatched(): boolean {
  const entry = createRequire(import.meta.url).resolve('postgres')
  // The CommonJS entry is cjs/src/index.js; the ES build sits in src/ beside cjs/.
  const root = path.resolve(path.dirname(entry), '..', '..')
  return Object.entries(MARKERS).every(([name, markers]) =>
    [path.join(root, 'src', name), path.join(root, 'cjs', 'src', name)].every((file) => {
      const source = readFileSync(file, 'utf8')
      return markers.every((marker) => source.includes(marker))
    }),
  )
}
