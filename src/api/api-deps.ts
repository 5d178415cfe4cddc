import type { Config } from '../shared/config/config.js';
import { createDb, type Db } from '../shared/db/client.js';
import { createRedis, type RedisConnection } from '../shared/redis/redis.js';
import { ShardLayout } from '../shared/redis/shards.js';
import { keyRingFromConfig } from '../shared/secrets/key-ring.js';
import type { Logger } from '../shared/telemetry/logger.js';
import { Metrics } from '../shared/telemetry/metrics.js';
import { createWebhookNotifier } from '../shared/webhooks/webhook-notifier.js';
import { MerchantDirectory } from './auth/merchant-directory.js';
import { CancellationProducer } from './cancellations/producer.js';
import type { ApiDeps } from './context.js';
import { AccessLog } from './http/access-log.js';
import { BodyBudget } from './http/body-budget.js';
import { createJobEventHub } from './jobs/events/job-event-hub-wiring.js';
import { HeavyReadLimiter } from './limits/heavy-read-limiter.js';
import { LocalTokenBuckets } from './limits/local-token-buckets.js';
import { RateLimiter } from './limits/rate-limiter.js';
import { ReadRouter } from './reads/read-router.js';
import { ReadAllCache } from './reward-configurations/read-all-cache.js';

/** The connections an API process holds: its entry point makes them, tests may bring their own. */
export interface ApiConnections {
  db: Db;
  /** For the queues (BullMQ), readiness and queue statistics. */
  redis: RedisConnection;
  /** For the small per-request commands, auto-pipelined (ApiDeps.requestRedis). */
  requestRedis: RedisConnection;
  /** A streaming replica of `db` for lag-tolerant reads (DATABASE_READ_URL); absent: none. */
  replica?: Db;
}

export function createApiConnections(config: Config, logger: Logger): ApiConnections {
  const pool = (connectionString: string, applicationName: string) =>
    createDb({
      connectionString,
      poolSize: config.DB_POOL_SIZE,
      applicationName,
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      // Reads are short: a statement or a lock wait past these answers 503, and frees the connection.
      timeouts: {
        statementMs: config.API_STATEMENT_TIMEOUT_MS,
        lockMs: config.API_LOCK_TIMEOUT_MS,
        idleInTransactionMs: config.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
      onConnectionError: (error) => logger.warn({ err: error, applicationName }, 'postgres connection lost'),
    });
  return {
    db: pool(config.DATABASE_URL, 'rewards-api'),
    redis: createRedis(config, 'producer', 'rewards-api'),
    requestRedis: createRedis(config, 'producer', 'rewards-api-requests', { autoPipelining: true }),
    replica: config.DATABASE_READ_URL === undefined ? undefined : pool(config.DATABASE_READ_URL, 'rewards-api-read'),
  };
}

/** The read router over these pools, its lag checks started (none without a replica). */
export function createReadRouter(
  config: Config,
  logger: Logger,
  metrics: Metrics,
  primary: Db,
  replica: Db | undefined,
): ReadRouter {
  return new ReadRouter(primary, replica, {
    maxLagMs: config.READ_MAX_LAG_MS,
    pollMs: config.READ_LAG_POLL_MS,
    metrics,
    logger,
  }).start();
}

/**
 * Everything a request handler uses, built in one place: the entry point and the tests run the same
 * wiring. Only the connections (and, in tests, metrics) come from outside.
 */
export function createApiDeps(
  config: Config,
  logger: Logger,
  { db, redis, requestRedis, replica }: ApiConnections,
  metrics = new Metrics({ collectDefaults: config.METRICS_ENABLED, processName: 'api' }),
): ApiDeps {
  const shards = new ShardLayout(config);
  const producer = new CancellationProducer(redis, {
    layout: shards,
    timeoutMs: config.ENQUEUE_TIMEOUT_MS,
    maxWaitingPerQueue: config.QUEUE_MAX_WAITING,
  });
  const secrets = keyRingFromConfig(config);
  const reads = createReadRouter(config, logger, metrics, db, replica);
  return {
    config,
    db,
    reads,
    logger,
    metrics,
    accessLog: new AccessLog(logger, metrics),
    redis,
    requestRedis,
    producer,
    shards,
    secrets,
    merchants: new MerchantDirectory(db, secrets, {
      reads,
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
    jobEvents: createJobEventHub({ config, logger, redis, shards, reads }),
    bodyBudget: new BodyBudget(
      config.UNAUTHENTICATED_BODY_BYTES_MAX,
      config.SMALL_BODY_LIMIT_BYTES,
      metrics.unauthenticatedBodyBytes,
    ),
    rateLimiter: new RateLimiter({
      redis: requestRedis,
      layout: shards,
      timeoutMs: config.RATE_LIMIT_TIMEOUT_MS,
      fallback: new LocalTokenBuckets({ maxMerchants: config.RATE_LIMIT_FALLBACK_MAX_MERCHANTS }),
      fallbackCounter: metrics.rateLimitFallback,
      logger,
    }),
    webhooks: createWebhookNotifier({
      shards,
      config,
      db,
      logger,
      metrics,
      redis,
      queue: () => producer.queues.webhooks,
    }),
  };
}
