import type { Config } from '../shared/config/config.js';
import type { Db } from '../shared/db/client.js';
import type { MerchantTurns } from '../shared/jobs/merchant-turns.js';
import type { ShardedQueues } from '../shared/jobs/queues.js';
import type { RedisConnection } from '../shared/redis/redis.js';
import type { ShardLayout } from '../shared/redis/shards.js';
import type { SecretSealer } from '../shared/secrets/secret-sealer.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Metrics } from '../shared/telemetry/metrics.js';
import type { WebhookNotifier } from '../shared/webhooks/webhook-notifier.js';
import type { AuditOutbox } from './jobs/audit-outbox.js';

/** What every processor may use, built once by createWorkerDeps (entry point and tests alike). */
export interface WorkerDeps {
  config: Config;
  db: Db;
  logger: Logger;
  metrics: Metrics;
  /** The worker's patient Redis connection: its BullMQ workers, queues and bookkeeping use it. */
  redis: RedisConnection;
  /** Every queue of every shard (queues.ts) on the worker's own connection: child jobs and webhook events are added there. */
  queues: ShardedQueues;
  /** Which queue shard holds each merchant's keys and each job (shards.ts). */
  shards: ShardLayout;
  /** Fair turns of bulk work between merchants, and their caps. */
  turns: MerchantTurns;
  /** Final outcomes that wait in Redis while Postgres is away. */
  outbox: AuditOutbox;
  /** Opens the webhook signing secrets stored sealed (the deployment's key ring). */
  secrets: SecretSealer;
  /** Tells merchants' webhooks that their jobs finished. */
  webhooks: WebhookNotifier;
  /** Aborted on the first SIGTERM: long jobs stop after the batch in flight and hand themselves back. */
  stopping: AbortSignal;
}
