import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Config } from '../shared/config/config.js';
import type { Db } from '../shared/db/client.js';
import { errorResponse } from '../shared/errors/error-response.js';
import { AppError } from '../shared/errors/errors.js';
import { refreshQueueDepth } from '../shared/jobs/queue-depth.js';
import { checkReadiness } from '../shared/process/readiness.js';
import type { RedisConnection } from '../shared/redis/redis.js';
import type { ShardLayout } from '../shared/redis/shards.js';
import type { Metrics } from '../shared/telemetry/metrics.js';
import { refreshWebhookPending } from '../shared/webhooks/webhook-pending.js';
import { countDisabledWebhooks } from '../shared/webhooks/webhooks.repository.js';
import type { WorkerDeps } from './worker-context.js';

/** The worker's own small HTTP server on WORKER_PORT: /healthz, /readyz and /metrics. */
export function createHealthApp(deps: {
  config: Pick<Config, 'READINESS_CHECK_TIMEOUT_MS'>;
  db: Db;
  redis: RedisConnection;
  shards: ShardLayout;
  metrics: Metrics;
  queues: WorkerDeps['queues'];
}) {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const { ready, checks } = await checkReadiness(
      deps.db,
      deps.redis,
      deps.shards,
      deps.config.READINESS_CHECK_TIMEOUT_MS,
      deps.metrics,
    );
    return c.json({ status: ready ? 'ok' : 'unavailable', checks }, ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    await Promise.all([
      checkReadiness(deps.db, deps.redis, deps.shards, deps.config.READINESS_CHECK_TIMEOUT_MS, deps.metrics),
      refreshQueueDepth(deps.metrics, deps.queues),
      refreshWebhookPending({ shards: deps.shards, redis: deps.redis, metrics: deps.metrics }),
      countDisabledWebhooks(deps.db).then(
        (count) => deps.metrics.webhooksDisabled.set(count),
        // Postgres away: keep the last value; readiness reports the outage.
        () => {},
      ),
    ]);
    c.header('Content-Type', deps.metrics.registry.contentType);
    return c.body(await deps.metrics.registry.metrics());
  });
  app.notFound((c) => errorResponse(c, new AppError('NOT_FOUND', 'Route not found')));
  return app;
}

export function startHealthServer(app: Hono, port: number, hostname: string) {
  return serve({ fetch: app.fetch, port, hostname });
}
