import type { Queue } from 'bullmq';
import type { Config } from '../shared/config.js';
import type { Db } from '../shared/db/client.js';
import type { Logger } from '../shared/logger.js';
import type { Metrics } from '../shared/metrics.js';
import type { QueueName } from '../shared/queue/job-catalogue.js';

/** What every processor may use, built once by the worker entry point (or a test) and passed in. */
export interface WorkerDeps {
  config: Config;
  db: Db;
  logger: Logger;
  metrics: Metrics;
  /** Producers on the worker's own connection, for adding child jobs. */
  queues: Record<QueueName, Queue>;
  /** Aborted on the first SIGTERM: long jobs stop after the batch in flight and hand themselves back. */
  stopping: AbortSignal;
}
