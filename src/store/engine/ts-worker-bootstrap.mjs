// Starts a worker thread whose module is a TypeScript source (under vitest and tsx, where this
// codebase runs from src/): registers tsx in the worker, then imports `workerData.entry`. Built
// code (dist/) starts its workers' .js directly and never loads this file.
import { workerData } from 'node:worker_threads'
import { register } from 'tsx/esm/api'

register()
await import(workerData.entry)
