import { Queue } from 'bullmq';
import { loadConfigOrExit } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { createLogger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { defaultJobOptions, type QueueName, queueNames } from '../shared/queue/job-catalogue.js';
import { createRedis } from '../shared/queue/redis.js';
import { installShutdown } from '../shared/shutdown.js';
import { createHealthApp, startHealthServer } from './health-server.js';
import { startWorkers } from './workers.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
// Each bulk job holds one connection at a time; the coalescer may have a few batches in flight.
const db = createDb({
  connectionString: config.DATABASE_URL,
  poolSize: Math.max(config.DB_POOL_SIZE, config.WORKER_BULK_CONCURRENCY + 4),
  applicationName: 'rewards-worker',
});
const redis = createRedis(config.REDIS_URL, 'worker', 'rewards-worker');
const metrics = new Metrics({ collectDefaults: config.METRICS_ENABLED, processName: 'worker' });
const queueOptions = { connection: redis, prefix: config.QUEUE_PREFIX, defaultJobOptions };
const queues = {
  [queueNames.single]: new Queue(queueNames.single, queueOptions),
  [queueNames.bulk]: new Queue(queueNames.bulk, queueOptions),
} as Record<QueueName, Queue>;
const stopping = new AbortController();

const running = startWorkers({ config, db, logger, metrics, queues, stopping: stopping.signal }, redis);
const health = startHealthServer(createHealthApp({ db, redis, metrics, queues }), config.WORKER_PORT, config.HOST);
logger.info(
  {
    port: config.WORKER_PORT,
    cancelConcurrency: config.WORKER_CANCEL_CONCURRENCY,
    bulkConcurrency: config.WORKER_BULK_CONCURRENCY,
  },
  'worker started',
);

installShutdown({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  steps: [
    // Long jobs stop after the batch in flight and hand themselves back; short ones finish.
    [
      'jobs',
      async () => {
        stopping.abort();
        await running.close();
      },
    ],
    ['queues', async () => void (await Promise.all(Object.values(queues).map((queue) => queue.close())))],
    ['health server', () => new Promise<void>((resolve) => health.close(() => resolve()))],
    ['redis', async () => void (await redis.quit().catch(() => redis.disconnect()))],
    ['database', () => db.destroy()],
  ],
});
