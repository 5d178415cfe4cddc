import { z } from 'zod';
import { booleanFromEnv, nonNegativeInt, positiveInt } from './setting-types.js';

/**
 * How jobs run: heavy reads, job event streams, batches, fan-out, worker concurrency, coalescing, locks,
 * the audit outbox, shutdown, metrics.
 */
export const jobSettings = {
  /**
   * Heavy reads (dry runs, job-rewards pages) one merchant may have running at once in one API
   * process; more answer 429 errorCode 7 with Retry-After. Counted in memory, per process: with N API
   * replicas a merchant may have up to N times this many.
   */
  HEAVY_READS_PER_MERCHANT: positiveInt(2),
  /**
   * Job event streams (GET jobs/events) open at once in one API process, all merchants together, and
   * per merchant in that process; past either, 429 errorCode 7 with Retry-After. Counted in memory: with
   * N API replicas a merchant may hold up to N times its bound.
   */
  JOB_EVENTS_MAX_STREAMS: positiveInt(2_000),
  JOB_EVENTS_MAX_STREAMS_PER_MERCHANT: positiveInt(20),
  /** A comment line on every job event stream this often, so that proxies keep an idle stream open. */
  JOB_EVENTS_HEARTBEAT_MS: positiveInt(15_000),
  /**
   * How often each watched job is read again with no event for it (an event lost to a Redis failover
   * or to the event stream's trim): once per job per interval, whatever the number of its streams.
   */
  JOB_EVENTS_RECHECK_MS: positiveInt(30_000),
  /** Rewards per transaction in the worker. */
  CANCEL_BATCH_SIZE: positiveInt(10_000),
  /** A bulk job with more identifiers than this is split into child jobs shared by all workers. */
  FANOUT_THRESHOLD: positiveInt(2_000),
  /** Identifiers (ids, external ids or players) per child job of a split bulk job. */
  FANOUT_CHUNK_SIZE: positiveInt(1_000),
  /** Single-cancel queue jobs (each a batch of requests) one worker holds; their requests are coalesced. */
  WORKER_CANCEL_CONCURRENCY: positiveInt(500),
  /**
   * Concurrent bulk jobs (and child jobs) one worker runs, each on a Postgres connection of its own.
   * Two by default: a split job's parts then run two at a time, so one replica keeps two Postgres
   * cores busy (a 1,000,000-reward bulkCancelByQuery 1.7× faster than with one, measured 2026-11-22). More than
   * the database's cores only piles transactions onto the same CPUs.
   */
  WORKER_BULK_CONCURRENCY: positiveInt(2),
  /** Most single cancels applied by one UPDATE; 1 switches coalescing off (one UPDATE per job). */
  COALESCE_MAX_BATCH: positiveInt(500),
  /** How long a coalescing batch waits for more single cancels before it is applied. */
  COALESCE_WINDOW_MS: nonNegativeInt(5),
  /**
   * How long a worker's hold on a job lasts without renewal; a live worker renews it every half of it,
   * so only an event loop blocked for 4 s would lose it. A worker that dies (kill -9, lost node) gives
   * its jobs back once the lock has expired and the next stalled check runs: at most
   * WORKER_LOCK_DURATION_MS + WORKER_STALLED_INTERVAL_MS (11 s by default) after its last renewal.
   */
  WORKER_LOCK_DURATION_MS: positiveInt(8_000),
  /** How often each worker looks for jobs whose lock expired (a dead worker's jobs). */
  WORKER_STALLED_INTERVAL_MS: positiveInt(3_000),
  /**
   * How often a worker moves the audit rows it kept in Redis while Postgres was away (finished jobs'
   * outcomes) to Postgres; also done at once when its workers resume after an outage. Each flush of an
   * empty outbox is one Redis command.
   */
  AUDIT_OUTBOX_FLUSH_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** Time the process allows itself to drain on SIGTERM before it forces the exit. */
  SHUTDOWN_TIMEOUT_MS: positiveInt(25_000),
  METRICS_ENABLED: booleanFromEnv.default(true),
};
