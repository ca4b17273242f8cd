import { fileURLToPath } from 'node:url'
import { defaultExternalConditions, defaultServerConditions } from 'vite'
import { defineConfig } from 'vitest/config'

// The package is imported by its name, as users do (npm's workspace link).
const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  // Run from the repository root too (`vitest run --config packages/client/vitest.config.ts`).
  root: source('.'),
  // Workspace packages resolve to their TypeScript sources, as in the root config.
  ssr: { resolve: { conditions: ['@palmvein/source', ...defaultServerConditions], externalConditions: ['@palmvein/source', ...defaultExternalConditions] } },
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
