import { defaultExternalConditions, defaultServerConditions } from 'vite'
import { defineConfig } from 'vitest/config'
import { loadUwsBuild } from './src/http/adapters/uws-build.js'

// test/large holds the memory-heavy tests (a gallery past 4 GiB): they run as their own stage
// (`npm run test:large`, once in CI) so that `npm test` stays within a developer machine's memory
// even when several suites run side by side.
const large = process.env.PALMVEIN_TEST_STAGE === 'large'
// test/outage cuts a PostgreSQL connection with a proxy: its own stage (`npm run test:outage`, with
// DATABASE_URL), since it needs a PostgreSQL server a developer's `npm test` may not have.
const outage = process.env.PALMVEIN_TEST_STAGE === 'outage'
// test/pgvector drives the bench's pgvector peer: its own stage (`npm run test:pgvector`, with
// DATABASE_URL), on a PostgreSQL server where scripts/pgvector-build.sh installed pgvector.
const pgvector = process.env.PALMVEIN_TEST_STAGE === 'pgvector'

// The HTTP suites run once per transport: node:http always, uWebSockets.js where a build loads
// (Node 20 here; on Node 22+ with glibc < 2.38 none does, and the run says so).
const HTTP_SUITES = ['test/http/**/*.test.ts', 'test/server/**/*.test.ts']
const uws = loadUwsBuild()
const transports = uws.ok ? ['uws', 'node'] : ['node']
if (!uws.ok && !large && !outage && !pgvector) console.log(`HTTP suites on node:http only: ${uws.reasons.join('; ')}`)

const shared = {
  // Each file boots its own service and database; two cores, so keep parallelism modest.
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // Many services run side by side: none takes the default metrics port (test/support/service.ts
  // gives each one a free port instead).
  env: { PALMVEIN_METRICS_PORT: '0' },
}

// Workspace packages (packages/*) run from their TypeScript sources, through their
// `@palmvein/source` export condition: a test sees a change without a build.
const ssr = {
  resolve: {
    conditions: ['@palmvein/source', ...defaultServerConditions],
    externalConditions: ['@palmvein/source', ...defaultExternalConditions],
  },
}

export default defineConfig({
  test: {
    maxWorkers: large || outage || pgvector ? 1 : 2,
    projects: large
      ? [{ ssr, test: { ...shared, name: 'large', include: ['test/large/**/*.test.ts'] } }]
      : outage
      ? [{ ssr, test: { ...shared, name: 'outage', include: ['test/outage/**/*.test.ts'] } }]
      : pgvector
      ? [{ ssr, test: { ...shared, name: 'pgvector', include: ['test/pgvector/**/*.test.ts'] } }]
      : [
          { ssr, test: { ...shared, name: 'core', include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'], exclude: ['test/large/**', 'test/outage/**', 'test/pgvector/**', ...HTTP_SUITES, '**/node_modules/**'] } },
          ...transports.map((transport) => ({
            ssr,
            test: { ...shared, name: `http:${transport}`, include: HTTP_SUITES, env: { ...shared.env, PALMVEIN_HTTP_SERVER: transport } },
          })),
        ],
  },
})
