import type { Config } from '../shared/config/config.js';
import { createDb, type Db } from '../shared/db/client.js';
import { MerchantTurns } from '../shared/jobs/merchant-turns.js';
import { ShardedQueues } from '../shared/jobs/queues.js';
import { createRedis, type RedisConnection } from '../shared/redis/redis.js';
import { ShardLayout } from '../shared/redis/shards.js';
import { keyRingFromConfig } from '../shared/secrets/key-ring.js';
import type { Logger } from '../shared/telemetry/logger.js';
import { Metrics } from '../shared/telemetry/metrics.js';
import { createWebhookNotifier } from '../shared/webhooks/webhook-notifier.js';
import { AuditOutbox } from './jobs/audit-outbox.js';
import type { WorkerDeps } from './worker-context.js';

export interface WorkerConnections {
  db: Db;
  redis: RedisConnection;
}

export function createWorkerConnections(config: Config, logger: Logger): WorkerConnections {
  return {
    // Each bulk job holds one connection at a time; the coalescer may have a few batches in flight.
    db: createDb({
      connectionString: config.DATABASE_URL,
      poolSize: Math.max(config.DB_POOL_SIZE, config.WORKER_BULK_CONCURRENCY + 4),
      applicationName: 'rewards-worker',
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      // Batches take longer than reads; a lock wait past its timeout puts the job back (workers.ts).
      timeouts: {
        statementMs: config.WORKER_STATEMENT_TIMEOUT_MS,
        lockMs: config.WORKER_LOCK_TIMEOUT_MS,
        idleInTransactionMs: config.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
      onConnectionError: (error) => logger.warn({ err: error }, 'postgres connection lost'),
    }),
    redis: createRedis(config, 'worker', 'rewards-worker'),
  };
}

/** The one wiring of a worker process's dependencies, used by the entry point and by tests. */
export function createWorkerDeps(
  config: Config,
  logger: Logger,
  { db, redis }: WorkerConnections,
  stopping: AbortSignal,
  metrics = new Metrics({ collectDefaults: config.METRICS_ENABLED, processName: 'worker' }),
): WorkerDeps {
  const shards = new ShardLayout(config);
  const queues = new ShardedQueues(redis, shards);
  return {
    config,
    db,
    logger,
    metrics,
    redis,
    queues,
    shards,
    turns: new MerchantTurns(redis, shards),
    outbox: new AuditOutbox(redis, db, logger, config.QUEUE_PREFIX, config.AUDIT_OUTBOX_FLUSH_INTERVAL_MS),
    secrets: keyRingFromConfig(config),
    webhooks: createWebhookNotifier({
      config,
      db,
      logger,
      metrics,
      redis,
      shards,
      queue: () => queues.webhooks,
    }),
    stopping,
  };
}
