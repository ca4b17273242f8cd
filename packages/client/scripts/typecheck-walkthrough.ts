// Type-checks the README's walkthrough block against the generated types (npm run typecheck):
// every path, parameter and body it sends must be one the OpenAPI document has.
import { execFile } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { walkthroughBlock } from './walkthrough-block.js'

const directory = fileURLToPath(new URL('../scratch/typecheck-walkthrough/', import.meta.url))
await mkdir(directory, { recursive: true })
try {
  await writeFile(`${directory}walkthrough.ts`, `${(await walkthroughBlock()).code}\nexport {}\n`)
  await writeFile(`${directory}tsconfig.json`, JSON.stringify({
    extends: fileURLToPath(new URL('../tsconfig.json', import.meta.url)), compilerOptions: { noEmit: true },
    // The WebAssembly types the matcher's sources need while @palmvein/matcher resolves to them.
    files: ['walkthrough.ts', fileURLToPath(new URL('../../matcher/src/webassembly.d.ts', import.meta.url))],
  }))
  await promisify(execFile)('tsc', ['-p', directory]).catch((error: { stdout?: string }) => {
    console.error(error.stdout || String(error))
    process.exitCode = 1
  })
} finally {
  await rm(directory, { recursive: true, force: true })
}
