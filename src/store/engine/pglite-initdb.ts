// `node pglite-initdb.js <directory>`: creates a new data directory's database (initdb) and exits.
// PGlite runs initdb in a second PGlite instance of its own and keeps it: ~500 MiB of WASM memory
// never used again. Run in a thread that then exited, the WASM memory went with it but ~40 MiB of
// C heap stayed in the service's malloc arenas (a fresh idle service: 199-247 MiB, a restarted one
// 169-189); a process of its own gives everything back.
import { PGlite } from '@electric-sql/pglite'

const directory = process.argv[2]
try {
  if (!directory) throw new Error('usage: pglite-initdb <directory>')
  await (await PGlite.create(directory)).close()
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
}
