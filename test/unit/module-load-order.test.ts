import { expect, it } from 'vitest';

/**
 * The API entry point loads the job catalogue (through the queue producer) before any route, so
 * the shared wire rules are evaluated before @hono/zod-openapi has added `.openapi()` to zod. The
 * route schemas must build all the same. Dynamic imports keep that order here; nothing else in
 * this file loads the API.
 */
it('builds the API when the shared wire rules load before the OpenAPI extension of zod', async () => {
  await import('../../src/shared/jobs/job-catalogue.js');
  const { createApp } = await import('../../src/api/app.js');
  expect(typeof createApp).toBe('function');
});
