import { serve } from '@hono/node-server';
import { loadConfigOrExit } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { createLogger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { CancellationProducer } from '../shared/queue/producer.js';
import { createRedis } from '../shared/queue/redis.js';
import { installShutdown } from '../shared/shutdown.js';
import { createApp } from './app.js';
import { MerchantDirectory } from './merchant-directory.js';
import { RateLimiter } from './rate-limiter.js';
import { ReadAllCache } from './read-all-cache.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'api' });
const db = createDb({
  connectionString: config.DATABASE_URL,
  poolSize: config.DB_POOL_SIZE,
  applicationName: 'rewards-api',
});
const redis = createRedis(config.REDIS_URL, 'producer', 'rewards-api');
const producer = new CancellationProducer(
  redis,
  config.QUEUE_PREFIX,
  config.ENQUEUE_TIMEOUT_MS,
  config.QUEUE_MAX_WAITING,
);
const metrics = new Metrics({ collectDefaults: config.METRICS_ENABLED, processName: 'api' });
const merchants = new MerchantDirectory(db, {
  ttlMs: config.MERCHANT_CACHE_TTL_MS,
  maxEntries: config.MERCHANT_CACHE_MAX_ENTRIES,
  maxBytes: config.MERCHANT_CACHE_MAX_BYTES,
});
const readAllCache = new ReadAllCache({
  ttlMs: config.READ_CACHE_TTL_MS,
  maxEntries: config.READ_CACHE_MAX_ENTRIES,
  maxBytes: config.READ_CACHE_MAX_BYTES,
});
const rateLimiter = new RateLimiter(redis, config.QUEUE_PREFIX, config.RATE_LIMIT_TIMEOUT_MS, logger);

const app = createApp({ config, db, logger, metrics, producer, redis, merchants, readAllCache, rateLimiter });
const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  logger.info({ port: info.port }, 'api listening');
});

installShutdown({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  // Stop accepting, let in-flight requests finish, then close what they used, in that order.
  steps: [
    ['http server', () => new Promise<void>((resolve) => server.close(() => resolve()))],
    ['queues', () => producer.close()],
    ['redis', async () => void (await redis.quit().catch(() => redis.disconnect()))],
    ['database', () => db.destroy()],
  ],
});
