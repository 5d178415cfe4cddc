import { createRedis } from '../../src/shared/redis/redis.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import type { WorkerDeps } from '../../src/worker/worker-context.js';
import { createWorkerDeps } from '../../src/worker/worker-deps.js';
import { type CancellationWorkers, startWorkers } from '../../src/worker/workers.js';
import type { TestEnvironment } from './environment.js';

export interface TestWorker {
  deps: WorkerDeps;
  running: CancellationWorkers;
  close(): Promise<void>;
}

/**
 * The real worker (the production wiring, same processors, same BullMQ workers) in this test process,
 * on the file's database and prefix.
 */
export async function startTestWorker(env: TestEnvironment): Promise<TestWorker> {
  const { config } = env;
  const redis = createRedis(config, 'worker', 'rewards-worker-test');
  const stopping = new AbortController();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker-test' });
  const metrics = new Metrics({ collectDefaults: false, processName: 'worker' });
  const deps = createWorkerDeps(config, logger, { db: env.db, redis }, stopping.signal, metrics);
  const running = startWorkers(deps);
  await Promise.all(running.workers.map((worker) => worker.waitUntilReady()));
  return {
    deps,
    running,
    async close() {
      stopping.abort();
      await running.close();
      await deps.queues.close();
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
