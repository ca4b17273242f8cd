// After a large load, releaseGarbage gives the memory of its garbage back to the system: V8's
// garbage and the freed C heap that glibc would otherwise keep resident (fragmented, so free()
// alone cannot shrink it).
import { expect, it } from 'vitest'
import { loadNativeAddon } from '@palmvein/matcher/backend'
import { releaseGarbage } from '../src/runtime/process-memory.js'

const glibc = Boolean((process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime)

it.runIf(glibc && loadNativeAddon().ok)("returns the freed memory of a load's garbage to the system", () => {
  const MIB = 2 ** 20
  // 240 MiB in 6 000-byte buffers (each its own malloc); one in ten survives, as a gallery's rows
  // outlive the buffers they were decrypted from, so freed runs sit between live chunks.
  let buffers: Buffer[] | null = Array.from({ length: 40_000 }, () => Buffer.alloc(6_000, 1))
  const survivors = buffers.filter((_, index) => index % 10 === 0)
  const loaded = process.memoryUsage.rss()
  buffers = null
  const released = releaseGarbage()
  const after = process.memoryUsage.rss()
  expect(released).toEqual({ collected: true, trimmed: true })
  expect(loaded - after).toBeGreaterThan(150 * MIB)
  expect(survivors.every((buffer) => buffer[5_999] === 1)).toBe(true)
})
