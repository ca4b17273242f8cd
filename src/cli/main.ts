#!/usr/bin/env node
// `palmvein`: the package's bin. `palmvein serve` caps glibc's malloc arenas before anything else
// loads (runtime/malloc-arenas.ts: threads take arenas while modules load); then the program
// (run-program.ts) loads and runs the command.
import { limitServiceMallocArenas } from '../runtime/malloc-arenas.js'

if (process.argv.slice(2).find((word) => !word.startsWith('-')) === 'serve') limitServiceMallocArenas()
await import('./run-program.js')
