import { Queue } from 'bullmq';
import { createLogger } from '../../src/shared/logger.js';
import { Metrics } from '../../src/shared/metrics.js';
import { defaultJobOptions, type QueueName, queueNames } from '../../src/shared/queue/job-catalogue.js';
import { createRedis } from '../../src/shared/queue/redis.js';
import type { WorkerDeps } from '../../src/worker/worker-context.js';
import { type CancellationWorkers, startWorkers } from '../../src/worker/workers.js';
import type { TestEnvironment } from './environment.js';

export interface TestWorker {
  deps: WorkerDeps;
  running: CancellationWorkers;
  close(): Promise<void>;
}

/** The real worker (same processors, same BullMQ workers) in this test process, on the file's prefix. */
export async function startTestWorker(env: TestEnvironment): Promise<TestWorker> {
  const { config } = env;
  const redis = createRedis(config.REDIS_URL, 'worker', 'rewards-worker-test');
  const queueOptions = { connection: redis, prefix: config.QUEUE_PREFIX, defaultJobOptions };
  const queues = {
    [queueNames.single]: new Queue(queueNames.single, queueOptions),
    [queueNames.bulk]: new Queue(queueNames.bulk, queueOptions),
  } as Record<QueueName, Queue>;
  const stopping = new AbortController();
  const deps: WorkerDeps = {
    config,
    db: env.db,
    logger: createLogger({ level: config.LOG_LEVEL, name: 'worker-test' }),
    metrics: new Metrics({ collectDefaults: false, processName: 'worker' }),
    queues,
    stopping: stopping.signal,
  };
  const running = startWorkers(deps, redis);
  await Promise.all(running.workers.map((worker) => worker.waitUntilReady()));
  return {
    deps,
    running,
    async close() {
      stopping.abort();
      await running.close();
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
      redis.disconnect();
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  { timeoutMs = 20_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
