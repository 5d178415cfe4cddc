import type { Config } from '../shared/config.js';
import { createDb, type Db } from '../shared/db/client.js';
import type { Logger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { createRedis, type RedisConnection } from '../shared/queue/redis.js';
import { keyRingFromConfig } from '../shared/secrets/key-ring.js';
import { webhookQueueName } from '../shared/webhooks/webhook-catalogue.js';
import { createWebhookNotifier } from '../shared/webhooks/webhook-notifier.js';
import type { ApiDeps } from './context.js';
import { CancellationProducer } from './jobs/producer.js';
import { MerchantDirectory } from './merchant-directory.js';
import { RateLimiter } from './rate-limiter.js';
import { ReadAllCache } from './read-all-cache.js';

/** The connections an API process holds: its entry point makes them, tests may bring their own. */
export interface ApiConnections {
  db: Db;
  redis: RedisConnection;
}

export function createApiConnections(config: Config, logger: Logger): ApiConnections {
  return {
    db: createDb({
      connectionString: config.DATABASE_URL,
      poolSize: config.DB_POOL_SIZE,
      applicationName: 'rewards-api',
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      onConnectionError: (error) => logger.warn({ err: error }, 'postgres connection lost'),
    }),
    redis: createRedis(config, 'producer', 'rewards-api'),
  };
}

/**
 * Everything a request handler uses, built in one place: the entry point and the tests run the same
 * wiring. Only the connections (and, in tests, metrics) come from outside.
 */
export function createApiDeps(
  config: Config,
  logger: Logger,
  { db, redis }: ApiConnections,
  metrics = new Metrics({ collectDefaults: config.METRICS_ENABLED, processName: 'api' }),
): ApiDeps {
  const producer = new CancellationProducer(redis, {
    prefix: config.QUEUE_PREFIX,
    timeoutMs: config.ENQUEUE_TIMEOUT_MS,
    maxWaitingPerQueue: config.QUEUE_MAX_WAITING,
  });
  const secrets = keyRingFromConfig(config);
  return {
    config,
    db,
    logger,
    metrics,
    redis,
    producer,
    secrets,
    merchants: new MerchantDirectory(db, secrets, {
      ttlMs: config.MERCHANT_CACHE_TTL_MS,
      maxEntries: config.MERCHANT_CACHE_MAX_ENTRIES,
      maxBytes: config.MERCHANT_CACHE_MAX_BYTES,
      staleMaxMs: config.MERCHANT_STALE_MAX_MS,
    }),
    readAllCache: new ReadAllCache({
      ttlMs: config.READ_CACHE_TTL_MS,
      maxEntries: config.READ_CACHE_MAX_ENTRIES,
      maxBytes: config.READ_CACHE_MAX_BYTES,
    }),
    rateLimiter: new RateLimiter(redis, config.QUEUE_PREFIX, config.RATE_LIMIT_TIMEOUT_MS, logger),
    webhooks: createWebhookNotifier({ config, db, logger, queue: () => producer.queues[webhookQueueName] }),
  };
}
