// Gives back the memory a large load leaves behind. Decrypting millions of templates into a
// gallery churns through short-lived buffers: afterwards V8 holds their garbage until its next
// major collection, and glibc keeps the freed C heap resident because its top is rarely free.
// At 1M members (2M rows) that is about 150 MiB of the service's RSS (1015 -> 863 MiB). Called
// once after the boot loads, and when the service is quiet (idle-memory-release.ts): full
// collections (tens of milliseconds) and one malloc_trim.
import { loadNativeAddon } from '@palmvein/matcher/backend'
import { fullCollection } from './full-collection.js'

/** Returns what it could: `{ collected, trimmed }` (trimmed is false without glibc or the addon). */
export function releaseGarbage(): { collected: boolean; trimmed: boolean } {
  let collected = false
  try {
    fullCollection()
    // V8 frees dead ArrayBuffers' memory on a background thread; the next full collection first
    // waits for that sweep, so after it the C heap holds the garbage's freed chunks to trim.
    fullCollection()
    collected = true
  } catch {
    // A runtime that refuses the flag: V8 collects on its own schedule instead.
  }
  const addon = loadNativeAddon()
  return { collected, trimmed: addon.ok && addon.value.releaseFreeHeap() }
}
