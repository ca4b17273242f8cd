#!/usr/bin/env node
// `npm install` builds everything through this script: the Rust addon, the WASM module, the
// TypeScript, the web console. Usage: node scripts/build.mjs [native|wasm|ts|console ...] (no argument = all, in order).
// A missing Rust toolchain is not an error: the matcher then runs on the WASM backend, unless
// PALMVEIN_REQUIRE_NATIVE=1 (CI), where a native build that cannot happen or fails stops the build.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => path.join(root, 'node_modules', '.bin', name)

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options })
  if (result.error) throw result.error
  return result.status ?? 1
}

function hasCargo() {
  const probe = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
  return !probe.error && probe.status === 0
}

const requireNative = process.env.PALMVEIN_REQUIRE_NATIVE === '1'

/** Falls back to WASM with a note, or stops the build when the native addon is required. */
function nativeUnavailable(reason) {
  if (requireNative) throw new Error(`[build] ${reason}, and PALMVEIN_REQUIRE_NATIVE=1 requires the native addon`)
  console.log(`[build] ${reason}; the matcher will use the WASM backend`)
}

const steps = {
  native() {
    if (process.env.PALMVEIN_SKIP_NATIVE === '1') return nativeUnavailable('native addon skipped (PALMVEIN_SKIP_NATIVE=1)')
    if (!hasCargo()) return nativeUnavailable('cargo not found: native addon not built')
    const outDir = path.join(root, 'native')
    fs.mkdirSync(outDir, { recursive: true })
    const status = run(bin('napi'), [
      'build', '--release', '--platform',
      '--manifest-path', 'crates/matcher-node/Cargo.toml',
      '--package-json-path', 'crates/matcher-node/package.json',
      '--output-dir', 'native', '--no-js', '--no-dts-header',
      // The generated typings would be an untracked file in native/; keep them with the build
      // artifacts (the TypeScript side declares the interface itself, in src/matcher/).
      '--dts', path.join('..', 'target', 'palmvein_matcher.d.ts'),
    ])
    if (status !== 0) return nativeUnavailable('native addon build failed')
    const built = fs.readdirSync(outDir).find((name) => name.endsWith('.node') && name !== 'palmvein_matcher.node')
    if (built) {
      // The napi-rs platform package of this platform (crates/matcher-node/npm/<platform>/), ready
      // for per-platform publishing: `palmvein_matcher.<platform>.node`, as its package.json names it.
      const platform = built.slice('palmvein_matcher.'.length, -'.node'.length)
      const platformDir = path.join(root, 'crates/matcher-node/npm', platform)
      if (fs.existsSync(platformDir)) fs.copyFileSync(path.join(outDir, built), path.join(platformDir, built))
      // One fixed file name in the package itself, so the loader needs no platform table here.
      fs.renameSync(path.join(outDir, built), path.join(outDir, 'palmvein_matcher.node'))
    }
  },
  wasm() {
    fs.mkdirSync(path.join(root, 'build'), { recursive: true })
    const status = run(bin('asc'), [
      'assembly/index.ts', '--outFile', 'build/matcher.wasm', '--textFile', 'build/matcher.wat',
      '--optimizeLevel', '3', '--shrinkLevel', '0', '--noAssert', '--runtime', 'stub',
      '--enable', 'simd', '--enable', 'threads', '--importMemory', '--sharedMemory',
      '--initialMemory', '1', '--maximumMemory', '65536',
    ])
    if (status !== 0) throw new Error('AssemblyScript build failed')
  },
  ts() {
    const status = run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'])
    if (status !== 0) throw new Error('TypeScript build failed')
    // SQL migrations ship beside the compiled store.
    fs.cpSync(path.join(root, 'src/store/migrations'), path.join(root, 'dist/store/migrations'), { recursive: true })
    fs.chmodSync(path.join(root, 'dist/cli.js'), 0o755)
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
if (wanted[0] === '--prepare') {
  wanted.shift()
  const installedByAnother = process.env.INIT_CWD && path.resolve(process.env.INIT_CWD) !== root
  const built = ['dist/cli.js', 'build/matcher.wasm'].every((file) => fs.existsSync(path.join(root, file)))
  if (installedByAnother && built) {
    console.log('[build] palmvein is already built; installed as a dependency, it is not rebuilt')
    process.exit(0)
  }
}

for (const name of wanted.length ? wanted : ['native', 'wasm', 'ts', 'console']) {
  if (!steps[name]) throw new Error(`unknown build step "${name}" (native, wasm, ts, console)`)
  steps[name]()
}
