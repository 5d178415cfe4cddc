export interface RedisMemoryRun {
  requests: number;
  idsPerRequest: number;
  idLength: number;
  /** Bytes of one request body (all are the same size). */
  bodyBytes: number;
  /** `used_memory` with the API and worker connected and idle, before the first request (MiB). */
  beforeMiB: number;
  /** Highest `used_memory` sampled (every 100 ms) from the first request until every job had completed. */
  peakMiB: number;
  peakSamples: number;
  /** Redis's own `used_memory_peak` since it started: the peak between two samples, too. */
  serverPeakMiB: number;
  /** `used_memory` once every job has completed and its identifiers were dropped. */
  afterMiB: number;
  deltaMiB: number;
  /** First request sent → last request answered. */
  sendMs: number;
  /** Requests sent again after a 503 or 429 (the API's deadline for storing a job passed on a busy machine). */
  retries: number;
  /** First request sent → every job seen completed. */
  completedMs: number;
  /** Every job completed → every job's data back to its small remainder (identifiers dropped). */
  identifiersDroppedMs: number | null;
  valid: boolean;
  loadAverage1m: number;
}

/** Redis memory around many large bulkCancel jobs, on a Redis server of the phase's own. */
export interface RedisMemoryResults {
  run: RedisMemoryRun | null;
  /** What the services ran with: the per-merchant cap raised so that no request is refused. */
  serviceEnv: Record<string, string>;
  /** WORKER_BULK_CONCURRENCY as the worker ran it ('default' when not set). */
  workerBulkConcurrency: string;
}

/** The target: Redis memory once every large bulk job has completed, at most this much above before. */
export const REDIS_MEMORY_HEADROOM_MIB = 50;
