#!/usr/bin/env node
// `npx palmvein` in a checkout: npm links the bins of dependencies into node_modules/.bin, never
// the root package's own, and in a workspaces root npx then finds no `palmvein` at all. So
// `npm install` in a checkout links it here, to the checkout's build: every `npx palmvein ...` of
// the README runs at once and never rebuilds anything. Installed as a dependency, npm links it.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const installedByAnother = process.env.INIT_CWD && path.resolve(process.env.INIT_CWD) !== root
const binDir = path.join(root, 'node_modules', '.bin')
if (!installedByAnother && fs.existsSync(path.join(root, 'node_modules'))) {
  const { bin } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  fs.mkdirSync(binDir, { recursive: true })
  for (const [name, target] of Object.entries(bin)) {
    const link = path.join(binDir, name)
    fs.rmSync(link, { force: true })
    fs.symlinkSync(path.relative(binDir, path.join(root, target)), link)
  }
}
