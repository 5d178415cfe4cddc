import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests `npm run mutate` runs against each mutant: the ones that exercise the mutated files
 * (stryker.config.json). End-to-end tests are left out: they run the code in child processes,
 * where a mutant is never switched on.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/unit/signature.test.ts',
      'test/unit/wire-rules.test.ts',
      'test/unit/coalescer.test.ts',
      'test/integration/auth.security.test.ts',
      'test/integration/cancel.happy.test.ts',
      'test/integration/cancel.error.test.ts',
      'test/integration/bulk-cancel.happy.test.ts',
      'test/integration/bulk-cancel-by-query.happy.test.ts',
      'test/integration/reward-cancellations.repository.happy.test.ts',
    ],
    reporters: ['default'],
  },
});
