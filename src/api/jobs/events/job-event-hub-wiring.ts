import type { Config } from '../../../shared/config/config.js';
import { createRedis, type RedisConnection } from '../../../shared/redis/redis.js';
import type { ShardLayout } from '../../../shared/redis/shards.js';
import type { Logger } from '../../../shared/telemetry/logger.js';
import type { ReadRouter } from '../../reads/read-router.js';
import { findJobStatus, finishedJobRecords } from '../job-status.js';
import { JobEventHub } from './job-event-hub.js';

/** The process's hub, reading statuses as jobs/status does (Redis first, a finished job's row from the replica). */
export function createJobEventHub(deps: {
  config: Config;
  logger: Logger;
  redis: RedisConnection;
  shards: ShardLayout;
  reads: ReadRouter;
}): JobEventHub {
  const { config, redis, shards, reads } = deps;
  // Made on the first stream: a process that serves none holds no extra connection.
  let patient: RedisConnection | undefined;
  return new JobEventHub({
    feed: {
      connection: () => {
        patient ??= createRedis(config, 'worker', 'rewards-api-job-events');
        return patient;
      },
      redis,
      shards,
      onClose: async () => {
        patient?.disconnect();
      },
    },
    readStatus: (jobId, merchantId) =>
      findJobStatus(redis, shards, finishedJobRecords(reads), jobId, config.RETENTION_MS, merchantId),
    logger: deps.logger,
    maxStreams: config.JOB_EVENTS_MAX_STREAMS,
    maxStreamsPerMerchant: config.JOB_EVENTS_MAX_STREAMS_PER_MERCHANT,
    recheckMs: config.JOB_EVENTS_RECHECK_MS,
  });
}
