// Which uWebSockets.js build loads here. The maintained republish of the official builds comes
// first, then the older unofficial package; each only from a real binary for this Node ABI and
// platform: the unofficial package would otherwise fall back, silently, to its own JS emulation.
import { createRequire } from 'node:module'
import path from 'node:path'
import type * as Uws from '@trufflesuite/uws-js-unofficial'

export type UwsModule = typeof Uws

export type UwsBuild = { ok: true; module: UwsModule; description: string } | { ok: false; reasons: string[] }

const require = createRequire(import.meta.url)
const binaryName = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`

/** Packages to try, best first, with where each keeps its binaries relative to its main file. */
export const UWS_PACKAGES = [
  { name: '@btc-vision/uwebsockets.js', binaries: '.' },
  { name: '@trufflesuite/uws-js-unofficial', binaries: '../binaries' },
] as const

function packageVersion(name: string, main: string): string {
  try {
    return (require(path.join(path.dirname(main), name.startsWith('@trufflesuite') ? '..' : '.', 'package.json')) as { version: string }).version
  } catch {
    return '?'
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return (
    message
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? message
  )
}

let cached: UwsBuild | null = null

export function loadUwsBuild(): UwsBuild {
  if (cached) return cached
  const reasons: string[] = []
  for (const candidate of UWS_PACKAGES) {
    let main: string
    try {
      main = require.resolve(candidate.name)
    } catch {
      reasons.push(`${candidate.name}: not installed`)
      continue
    }
    const binary = path.join(path.dirname(main), candidate.binaries, binaryName)
    try {
      const module = require(binary) as UwsModule
      return (cached = { ok: true, module, description: `uWebSockets.js ${packageVersion(candidate.name, main)} (${candidate.name})` })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      reasons.push(
        code === 'MODULE_NOT_FOUND'
          ? `${candidate.name}: no binary for Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch})`
          : `${candidate.name}: ${firstLine(error)}`,
      )
    }
  }
  return (cached = { ok: false, reasons })
}
