import { createRoute, z } from '@hono/zod-openapi';
import { refreshQueueDepth } from '../../shared/jobs/queue-depth.js';
import { checkReadiness } from '../../shared/process/readiness.js';
import type { App } from '../context.js';
import { typedText } from '../http/typed-responses.js';

const ReadinessSchema = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({ postgres: z.enum(['ok', 'unavailable']), redis: z.enum(['ok', 'unavailable']) }),
  })
  .openapi('Readiness');

/** Health and readiness: unauthenticated, for orchestrators, on both listeners. */
export function registerHealthRoutes(app: App): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'getHealth',
      tags: ['Operations'],
      // Unauthenticated: the documents say so rather than leave it unstated.
      security: [],
      summary: 'Liveness: the process is up',
      responses: {
        200: { description: 'Up', content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } } },
      },
    }),
    (c) => c.json({ status: 'ok' as const }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'getReadiness',
      tags: ['Operations'],
      security: [],
      summary: 'Readiness: Postgres and Redis answer',
      responses: {
        200: { description: 'Ready', content: { 'application/json': { schema: ReadinessSchema } } },
        503: {
          description: 'A dependency does not answer',
          content: { 'application/json': { schema: ReadinessSchema } },
        },
      },
    }),
    async (c) => {
      const { db, redis, shards, config, metrics } = c.get('deps');
      const { ready, checks } = await checkReadiness(db, redis, shards, config.READINESS_CHECK_TIMEOUT_MS, metrics);
      return ready
        ? c.json({ status: 'ok' as const, checks }, 200)
        : c.json({ status: 'unavailable' as const, checks }, 503);
    },
  );
}

/**
 * Prometheus metrics: on the admin listener only. A scrape runs a Postgres query and a dozen Redis
 * calls, which nobody on the merchants' network should be able to set off.
 */
export function registerMetricsRoute(app: App): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
      tags: ['Operations'],
      security: [],
      summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } } },
    }),
    async (c) => {
      const { db, redis, shards, config, metrics, producer } = c.get('deps');
      await Promise.all([
        checkReadiness(db, redis, shards, config.READINESS_CHECK_TIMEOUT_MS, metrics),
        producer.ready ? refreshQueueDepth(metrics, producer.queues) : undefined,
      ]);
      return typedText(c, await metrics.registry.metrics(), 200, metrics.registry.contentType);
    },
  );
}
