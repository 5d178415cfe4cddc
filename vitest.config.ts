import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs no server at all (`npm run test:unit`); `integration` (integration,
// end-to-end, fault, browser and deployment files) finds Postgres and Redis once per run in its global setup. `npm test` runs both.
export default defineConfig({
  test: {
    // CI prints one line per test so a failure is easy to find; locally the default is enough.
    reporters: process.env.CI ? ['verbose'] : ['default'],
    teardownTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: [
            'test/integration/**/*.test.ts',
            'test/e2e/**/*.test.ts',
            'test/fault/**/*.test.ts',
            'test/browser/**/*.test.ts',
            'test/deploy/**/*.test.ts',
          ],
          globalSetup: ['test/helpers/global-setup.ts'],
          // Files run in parallel, each in its own database and queue prefix (test/helpers/environment.ts).
          pool: 'forks',
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
