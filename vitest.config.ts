import { defineConfig } from 'vitest/config'

// test/large holds the memory-heavy tests (a gallery past 4 GiB): they run as their own stage
// (`npm run test:large`, once in CI) so that `npm test` stays within a developer machine's memory
// even when several suites run side by side.
const large = process.env.PALMVEIN_TEST_STAGE === 'large'

export default defineConfig({
  test: {
    include: large ? ['test/large/**/*.test.ts'] : ['test/**/*.test.ts'],
    exclude: large ? [] : ['test/large/**', '**/node_modules/**'],
    // Each file boots its own service and database; two cores, so keep parallelism modest.
    pool: 'forks',
    maxWorkers: large ? 1 : 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
