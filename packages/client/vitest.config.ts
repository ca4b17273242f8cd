import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

// The package is imported by its name, as users do. Until the workspace install links it (and
// @palmvein/matcher) into node_modules, the names resolve to the sources here.
const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  // Run from the repository root too (`vitest run --config packages/client/vitest.config.ts`).
  root: source('.'),
  resolve: {
    alias: {
      '@palmvein/client': source('./src/index.ts'),
      '@palmvein/matcher': source('../../src/matcher/index.ts'),
    },
  },
  test: {
    name: 'client',
    include: ['test/**/*.test.ts'],
    // Each file boots its own service and database; two cores, so keep parallelism modest.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { PALMVEIN_METRICS_PORT: '0' },
  },
})
