#!/usr/bin/env node
// `npm install` builds everything through this script: the matcher workspace package
// (packages/matcher: its Rust addon, WASM module and TypeScript, by its own build script), then the
// service's TypeScript, then the web console (packages/console). Usage: node scripts/build.mjs [native|wasm|ts|console ...] (no argument = all, in
// order). A missing Rust toolchain is not an error: the matcher then runs on the WASM backend,
// unless PALMVEIN_REQUIRE_NATIVE=1 (CI), where a native build that cannot happen or fails stops it.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options })
  if (result.error) throw result.error
  return result.status ?? 1
}

const matcherBuild = path.join(root, 'packages', 'matcher', 'scripts', 'build.mjs')
const buildMatcher = (step) => {
  if (run(process.execPath, [matcherBuild, step]) !== 0) throw new Error(`[build] @palmvein/matcher ${step} failed`)
}

const steps = {
  native: () => buildMatcher('native'),
  wasm: () => buildMatcher('wasm'),
  ts() {
    // The service compiles against the matcher's declarations (dist/*.d.ts): the matcher first.
    buildMatcher('ts')
    // Then the client (it builds its captures on the matcher), which `palmvein terminal` runs on.
    const client = run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'packages/client/tsconfig.build.json'])
    if (client !== 0) throw new Error('[build] @palmvein/client failed')
    const status = run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'])
    if (status !== 0) throw new Error('TypeScript build failed')
    // SQL migrations ship beside the compiled store: an exact copy, so a renamed or removed one does not stay behind and run twice.
    fs.rmSync(path.join(root, 'dist/store/migrations'), { recursive: true, force: true })
    fs.cpSync(path.join(root, 'src/store/migrations'), path.join(root, 'dist/store/migrations'), { recursive: true })
    fs.chmodSync(path.join(root, 'dist/cli/main.js'), 0o755)
  },
  // The web console (packages/console): its typed client comes from the compiled service's OpenAPI
  // document, so it builds after `ts`.
  console() {
    const status = run(process.execPath, [path.join(root, 'packages/console/scripts/build.mjs')])
    if (status !== 0) throw new Error('console build failed')
  },
}

const wanted = process.argv.slice(2)

// `prepare` runs this with --prepare. In this repository (npm install, npm pack) it builds; in a
// project that installs palmvein from a directory or git (a file: dependency), the built package
// is used as it is: no cargo, no rebuild, no rewriting dist/ under a service that runs from it.
// Nor under `npx palmvein` in a checkout: npm (10 and 11) links a package whose own bin is asked
// for into its npx cache and runs its `prepare` there (npm_command=exec); the checkout's build is
// the one to run, at once.
if (wanted[0] === '--prepare') {
  wanted.shift()
  const installedByAnother = process.env.INIT_CWD && path.resolve(process.env.INIT_CWD) !== root
  const linkedByNpx = process.env.npm_command === 'exec'
  const built = ['dist/cli/main.js', 'packages/matcher/dist/index.js', 'packages/matcher/build/matcher.wasm'].every((file) =>
    fs.existsSync(path.join(root, file)),
  )
  if ((installedByAnother || linkedByNpx) && built) {
    if (installedByAnother) console.log('[build] palmvein is already built; installed as a dependency, it is not rebuilt')
    process.exit(0)
  }
}

for (const name of wanted.length ? wanted : ['native', 'wasm', 'ts', 'console']) {
  if (!steps[name]) throw new Error(`unknown build step "${name}" (native, wasm, ts, console)`)
  steps[name]()
}
