import { loadConfigOrExit } from '../shared/config/config.js';
import { installShutdown } from '../shared/process/shutdown.js';
import { closeRedis } from '../shared/redis/redis.js';
import { createLogger } from '../shared/telemetry/logger.js';
import { flushTraces } from '../shared/telemetry/trace-context.js';
import { createHealthApp, startHealthServer } from './health-server.js';
import { RetentionSweeper } from './retention/retention-sweeper.js';
import { createWorkerConnections, createWorkerDeps } from './worker-deps.js';
import { startWorkers } from './workers.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
const connections = createWorkerConnections(config, logger);
const stopping = new AbortController();
const deps = createWorkerDeps(config, logger, connections, stopping.signal);

const running = startWorkers(deps);
// One replica at a time removes what has outlived RETENTION_MS (docs/design.md §13).
const sweeper = new RetentionSweeper(deps);
sweeper.start();
const health = startHealthServer(
  createHealthApp({ ...connections, config, shards: deps.shards, metrics: deps.metrics, queues: deps.queues }),
  config.WORKER_PORT,
  config.HOST,
);
logger.info(
  {
    port: config.WORKER_PORT,
    cancelConcurrency: config.WORKER_CANCEL_CONCURRENCY,
    bulkConcurrency: config.WORKER_BULK_CONCURRENCY,
    retentionMs: config.RETENTION_MS,
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
        // A sweep in flight ends after its current statement (a few milliseconds).
        await Promise.all([running.close(), sweeper.stop()]);
      },
    ],
    ['queues', () => deps.queues.close()],
    ['health server', () => new Promise<void>((resolve) => health.close(() => resolve()))],
    ['redis', () => closeRedis(connections.redis)],
    ['database', () => connections.db.destroy()],
    ['traces', () => flushTraces()],
  ],
});
