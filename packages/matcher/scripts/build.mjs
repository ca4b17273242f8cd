#!/usr/bin/env node
// Builds @palmvein/matcher from source in a checkout: the Rust addon (native/palmvein_matcher.node),
// the AssemblyScript module (build/matcher.wasm) and the TypeScript (dist/). Usage:
// node scripts/build.mjs [native|wasm|ts ...] (no argument = all, in order). The root `npm install`
// runs it through the service's scripts/build.mjs. A missing Rust toolchain is not an error: the
// matcher then loads the prebuilt platform package, or runs on WASM, unless
// PALMVEIN_REQUIRE_NATIVE=1 (CI), where a native build that cannot happen or fails stops the build.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
// Build tools are dev dependencies: hoisted to the workspace root's node_modules in a checkout.
const resolveTool = (specifier) => createRequire(path.join(packageRoot, 'package.json')).resolve(specifier)

function run(command, args) {
  const result = spawnSync(command, args, { cwd: packageRoot, stdio: 'inherit' })
  if (result.error) throw result.error
  return result.status ?? 1
}

function hasCargo() {
  const probe = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
  return !probe.error && probe.status === 0
}

const requireNative = process.env.PALMVEIN_REQUIRE_NATIVE === '1'

/** Goes on without the local addon with a note, or stops the build when the native addon is required. */
function nativeUnavailable(reason) {
  if (requireNative) throw new Error(`[build] ${reason}, and PALMVEIN_REQUIRE_NATIVE=1 requires the native addon`)
  console.log(`[build] ${reason}; the matcher will use the prebuilt platform package if installed, else the WASM backend`)
}

const steps = {
  native() {
    if (process.env.PALMVEIN_SKIP_NATIVE === '1') return nativeUnavailable('native addon skipped (PALMVEIN_SKIP_NATIVE=1)')
    if (!hasCargo()) return nativeUnavailable('cargo not found: native addon not built')
    const outDir = path.join(packageRoot, 'native')
    fs.mkdirSync(outDir, { recursive: true })
    const napi = path.join(path.dirname(resolveTool('@napi-rs/cli/package.json')), 'dist', 'cli.js')
    const status = run(process.execPath, [
      napi, 'build', '--release', '--platform',
      '--manifest-path', 'napi/Cargo.toml',
      '--package-json-path', 'package.json',
      '--output-dir', 'native', '--no-js', '--no-dts-header',
      // The generated typings would be an untracked file in native/; keep them with the build
      // artifacts (the TypeScript side declares the interface itself, in src/backend.ts).
      '--dts', path.join('..', '..', '..', 'target', 'palmvein_matcher.d.ts'),
    ])
    if (status !== 0) return nativeUnavailable('native addon build failed')
    const built = fs.readdirSync(outDir).find((name) => name.endsWith('.node') && name !== 'palmvein_matcher.node')
    if (!built) return
    // The platform package of this machine (npm/<platform>/) gets the build too, ready to pack:
    // `palmvein_matcher.<platform>.node`, as its package.json names it.
    const platform = built.slice('palmvein_matcher.'.length, -'.node'.length)
    const platformDir = path.join(packageRoot, 'npm', platform)
    if (fs.existsSync(platformDir)) fs.copyFileSync(path.join(outDir, built), path.join(platformDir, built))
    // One fixed file name for a build from source, so the loader finds it before any platform package.
    fs.renameSync(path.join(outDir, built), path.join(outDir, 'palmvein_matcher.node'))
  },
  wasm() {
    fs.mkdirSync(path.join(packageRoot, 'build'), { recursive: true })
    const asc = path.join(path.dirname(resolveTool('assemblyscript/package.json')), 'bin', 'asc.js')
    const status = run(process.execPath, [
      asc, 'assembly/index.ts', '--outFile', 'build/matcher.wasm', '--textFile', 'build/matcher.wat',
      '--optimizeLevel', '3', '--shrinkLevel', '0', '--noAssert', '--runtime', 'stub',
      '--enable', 'simd', '--enable', 'threads', '--importMemory', '--sharedMemory',
      '--initialMemory', '1', '--maximumMemory', '65536',
    ])
    if (status !== 0) throw new Error('AssemblyScript build failed')
  },
  ts() {
    const tsc = path.join(path.dirname(resolveTool('typescript/package.json')), 'bin', 'tsc')
    if (run(process.execPath, [tsc, '-p', 'tsconfig.build.json']) !== 0) throw new Error('TypeScript build of @palmvein/matcher failed')
  },
}

const wanted = process.argv.slice(2)
for (const name of wanted.length ? wanted : ['native', 'wasm', 'ts']) {
  if (!steps[name]) throw new Error(`unknown build step "${name}" (native, wasm, ts)`)
  steps[name]()
}
