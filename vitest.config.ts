import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Files run in parallel, each in its own database and queue prefix (test/helpers/environment.ts).
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // CI prints one line per test so a failure is easy to find; locally the default is enough.
    reporters: process.env.CI ? ['verbose'] : ['default'],
  },
});
