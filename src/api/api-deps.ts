import type { Config } from '../shared/config.js';
import { createDb, type Db } from '../shared/db/client.js';
import type { Logger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { createRedis, type RedisConnection } from '../shared/queue/redis.js';
import { keyRingFromConfig } from '../shared/secrets/key-ring.js';
import { webhookQueueName } from '../shared/webhooks/webhook-catalogue.js';
import { createWebhookNotifier } from '../shared/webhooks/webhook-notifier.js';
import type { ApiDeps } from './context.js';
import { HeavyReadLimiter } from './heavy-read-limiter.js';
import { CancellationProducer } from './jobs/producer.js';
import { LocalTokenBuckets } from './local-token-buckets.js';
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
      // Reads are short: a statement or a lock wait past these answers 503, and frees the connection.
      timeouts: {
        statementMs: config.API_STATEMENT_TIMEOUT_MS,
        lockMs: config.API_LOCK_TIMEOUT_MS,
        idleInTransactionMs: config.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
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
    heavyReads: new HeavyReadLimiter(config.HEAVY_READS_PER_MERCHANT),
    rateLimiter: new RateLimiter({
      redis,
      keyPrefix: config.QUEUE_PREFIX,
      timeoutMs: config.RATE_LIMIT_TIMEOUT_MS,
      fallback: new LocalTokenBuckets({ maxMerchants: config.RATE_LIMIT_FALLBACK_MAX_MERCHANTS }),
      fallbackCounter: metrics.rateLimitFallback,
      logger,
    }),
    webhooks: createWebhookNotifier({
      config,
      db,
      logger,
      metrics,
      redis,
      queue: () => producer.queues[webhookQueueName],
    }),
  };
}
