import { z } from 'zod';
import { MAX_QUEUE_SHARDS, parseShardList } from '../../redis/shards.js';
import { nonNegativeInt, positiveInt } from './setting-types.js';

/**
 * The queue (prefix, shards, bounds, per-merchant records), the database pools and their timeouts, and
 * how the processes find out whether Postgres and Redis answer (readiness, the worker's outage probe).
 */
export const queueAndDatabaseSettings = {
  /** Redis key prefix of every queue. The hash tag keeps one queue's keys in one Redis Cluster slot. */
  QUEUE_PREFIX: z.string().min(1).default('{rewards}'),
  /**
   * Queue shards (docs/design.md, "Queue shards"): each shard's queues and its merchants' keys under a
   * hash tag of their own, so a Redis Cluster spreads them over its masters. 1 keeps the unsharded key
   * layout; 16 is the recommendation on a Cluster. Every API and worker process must agree.
   */
  QUEUE_SHARDS: z.coerce.number().int().min(1).max(MAX_QUEUE_SHARDS).default(1),
  /** Only while the shard count changes (docs/operations.md): the count before, whose shards are still consumed. */
  QUEUE_SHARDS_PREVIOUS: z.coerce.number().int().min(1).max(MAX_QUEUE_SHARDS).optional(),
  /** Worker only: the shards it consumes (`0-7`, `0,3,8-11`); every shard when unset. */
  WORKER_SHARDS: z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return undefined;
      const shards = parseShardList(value, MAX_QUEUE_SHARDS);
      if (typeof shards === 'string') {
        context.addIssue({ code: 'custom', message: shards });
        return z.NEVER;
      }
      return shards;
    }),
  /** How long the API waits for Redis to store a job before it answers 503. */
  ENQUEUE_TIMEOUT_MS: positiveInt(1_500),
  /**
   * Operators' cap per queue: above this many waiting jobs in a queue (counted per queue: a backlog
   * of bulk jobs does not refuse single cancels) the API answers 503 instead of queueing more; 0 = no cap.
   */
  QUEUE_MAX_WAITING: nonNegativeInt(0),
  /**
   * Most Idempotency-Key records one merchant may have in Redis at once (each lives 24 h, ~200 bytes):
   * 1,000,000 is a fresh key every 86 ms all day long (11.6 a second), ~200 MB. Past it a request with
   * a new key is 429 (errorCode 7); repeats of existing keys still replay. 0: no bound.
   */
  IDEMPOTENCY_RECORDS_PER_MERCHANT: nonNegativeInt(1_000_000),
  /**
   * Most version-2 replay records one merchant may have in Redis at once (one per v2 cancel, each
   * living up to two SIGNATURE_WINDOW_MS, ~250 bytes): 600,000 is the default rate limit (1,000 a
   * second) for two 5-minute windows, ~150 MB. Past it a new v2 cancel is 429 (errorCode 7). 0: no bound.
   */
  SIGNATURE_REPLAY_RECORDS_PER_MERCHANT: nonNegativeInt(600_000),
  /** Default per-merchant cap of bulk jobs queued or running (fan-out parts not counted); a merchant's own setting wins. */
  MAX_QUEUED_JOBS: positiveInt(100),

  DB_POOL_SIZE: positiveInt(10),
  /**
   * How long a request waits for a Postgres connection before it fails. Short, so that reads answer
   * 503 within 2 s while the database is away, instead of hanging.
   */
  DB_CONNECT_TIMEOUT_MS: positiveInt(1_500),
  /**
   * Postgres timeouts, set on every connection of a pool when it opens (startup parameters), so no
   * statement, lock wait or forgotten transaction can hold a connection without end. 0 switches one
   * off (the server's own setting then applies). The migration command sets none.
   * API: reads answer within seconds, or the request answers 503 with Retry-After (a statement
   * cancelled, SQLSTATE 57014, or a lock not granted, 55P03).
   */
  API_STATEMENT_TIMEOUT_MS: nonNegativeInt(5_000),
  API_LOCK_TIMEOUT_MS: nonNegativeInt(1_000),
  /**
   * Worker: a batch statement may take longer (at most CANCEL_BATCH_SIZE rewards); a lock not granted
   * puts the job back like a deadlock does (no attempt used), a statement past its timeout uses an
   * attempt (retried with backoff).
   */
  WORKER_STATEMENT_TIMEOUT_MS: nonNegativeInt(60_000),
  WORKER_LOCK_TIMEOUT_MS: nonNegativeInt(5_000),
  /** Both pools: a session idle inside an open transaction this long is ended by Postgres. */
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: nonNegativeInt(30_000),
  /**
   * `npm run migrate`: the `lock_timeout` of every migration statement, so an ALTER queued behind a
   * long query gives up instead of queueing every request behind itself; a migration whose lock is
   * not granted is rolled back and retried this many times (with backoff), then the command fails.
   */
  MIGRATION_LOCK_TIMEOUT_MS: positiveInt(500),
  MIGRATION_LOCK_RETRIES: nonNegativeInt(10),

  /**
   * How long /readyz (and the `gateway_ready` gauge) waits for each of Postgres and Redis to answer
   * before it reports that one unavailable. Keep it below the orchestrator's probe timeout (1 s by
   * default in Kubernetes), so the probe gets the answer that names the failing check.
   */
  READINESS_CHECK_TIMEOUT_MS: z.coerce.number().int().min(10).max(30_000).default(1_000),
  /**
   * Worker, while Postgres is away (its workers paused): how often it asks whether Postgres answers
   * again, so its jobs resume within about this long of the database's return; and how long each
   * such probe waits for the answer.
   */
  DB_PROBE_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  DB_PROBE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
};
