import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { type AdminOperator, adminTokenProblem, parseAdminTokens } from './admin-operators.js';
import { isIpOrCidr } from './ip-ranges.js';
import { MAX_QUEUE_SHARDS, parseShardList } from './queue/shards.js';
import { DEVELOPMENT_KEY_RING_FILE, developmentKeyRing } from './secrets/development-key-ring.js';
import { parseKeyRing } from './secrets/key-ring-text.js';

/** Most identifiers in one bulk request unless BULK_MAX_ITEMS says otherwise; the OpenAPI documents state it. */
export const DEFAULT_BULK_MAX_ITEMS = 10_000;

/**
 * The only place that reads the environment. Every process parses it once at start-up; a bad value
 * stops the process with a message naming the variable (see `loadConfigOrExit`).
 */

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** `false` or empty: no proxy is trusted (an empty list). Otherwise a comma-separated list of IPs / CIDR ranges. */
const trustedProxies = z
  .string()
  .default('false')
  .transform((setting, context) => {
    const entries = setting
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '' && entry !== 'false');
    const invalid = entries.filter((entry) => !isIpOrCidr(entry));
    if (invalid.length > 0) {
      context.addIssue({ code: 'custom', message: `not an IP address or CIDR range: ${invalid.join(', ')}` });
      return z.NEVER;
    }
    return entries;
  });

/** A missing value is reported as "required", a present but wrong one by what it must be. */
const requiredUrl = (protocol: RegExp, shape: string) =>
  z.url({
    protocol,
    error: (issue) => (issue.input === undefined || issue.input === '' ? 'required' : `must be a ${shape} URL`),
  });

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const nonNegativeInt = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    DATABASE_URL: requiredUrl(/^postgres(ql)?$/, 'postgres://'),
    /**
     * A streaming replica of DATABASE_URL (optional). The API sends the reads that tolerate a second of
     * lag there (readAll, dry runs, finished jobs' status, job rewards pages) while the replica's lag is
     * within READ_MAX_LAG_MS, and to the primary otherwise; with the primary down they still answer from
     * the replica. Unset: every read goes to DATABASE_URL.
     */
    DATABASE_READ_URL: z
      .string()
      .optional()
      .transform((value) => (value === undefined || value.trim() === '' ? undefined : value))
      .pipe(requiredUrl(/^postgres(ql)?$/, 'postgres://').optional()),
    /** Most replica lag (ms) at which reads still go to the replica; behind that, they go to the primary. */
    READ_MAX_LAG_MS: positiveInt(1_000),
    /** How often the API measures the replica's lag (and whether each pool answers). */
    READ_LAG_POLL_MS: positiveInt(200),
    /** Required unless REDIS_CLUSTER_NODES is set. */
    REDIS_URL: requiredUrl(/^rediss?$/, 'redis://').optional(),
    /**
     * `host:port,host:port,...`: seed nodes of a Redis Cluster. When set, every process talks to the
     * cluster (the queue prefix's hash tag keeps each queue in one slot) and REDIS_URL is not used.
     */
    REDIS_CLUSTER_NODES: z
      .string()
      .optional()
      .transform((value, context) => {
        if (value === undefined || value.trim() === '') return undefined;
        const nodes = value.split(',').map((entry) => entry.trim());
        const parsed = [];
        for (const entry of nodes) {
          const match = /^(?<host>[^:\s]+|\[[0-9a-fA-F:]+\]):(?<port>\d{1,5})$/.exec(entry);
          if (!match?.groups) {
            context.addIssue({ code: 'custom', message: 'must be a comma-separated list of host:port' });
            return z.NEVER;
          }
          parsed.push({ host: (match.groups.host as string).replace(/^\[|\]$/g, ''), port: Number(match.groups.port) });
        }
        return parsed;
      }),
    /**
     * Hash partitions of `rewards` (by merchant_id), made by the first `npm run migrate` of a database
     * and fixed from then on: a later value changes nothing (the migrate command warns).
     */
    REWARD_PARTITIONS: z.coerce.number().int().min(1).max(1024).default(16),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
    HOST: z.string().min(1).default('0.0.0.0'),
    /**
     * The admin listener: the admin API, the queue dashboard and /metrics answer here only, never on PORT
     * (docs/design.md, "Admin plane"). Keep it off the merchants' network.
     */
    ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
    /**
     * Admin operators, `name:token,...` (each token at least 32 characters, no placeholder). Parsed into
     * a list; see adminOperators() for the one list the admin plane uses.
     */
    ADMIN_TOKENS: z
      .string()
      .default('')
      .transform((setting, context) => {
        const { operators, problems } = parseAdminTokens(setting);
        for (const problem of problems) context.addIssue({ code: 'custom', message: problem });
        return problems.length > 0 ? z.NEVER : operators;
      }),
    /** One operator named `admin` (as ADMIN_TOKENS=admin:<token>); the admin plane is closed while no token is set. */
    ADMIN_TOKEN: z
      .string()
      .optional()
      .transform((token, context) => {
        if (token === undefined || token === '') return undefined;
        const problem = adminTokenProblem(token);
        if (problem) {
          context.addIssue({ code: 'custom', message: problem });
          return z.NEVER;
        }
        return token;
      }),
    /**
     * The merchants' listener as merchants reach it (scheme, host, port; no path): the origin of the
     * merchant portal's links (docs/portal.md). Unset: `http://localhost:$PORT`. Portal cookies are
     * `Secure` unless it is plain http.
     */
    PUBLIC_BASE_URL: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .url({ protocol: /^https?$/ })
        .refine((url) => ['', '/'].includes(new URL(url).pathname) && !new URL(url).search, 'an origin only, no path')
        .transform((url) => new URL(url).origin)
        .optional(),
    ),
    /** Lets the queue dashboard retry, promote, clean and remove jobs; read-only otherwise. */
    DASHBOARD_WRITE: booleanFromEnv.default(false),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

    /** Accepted clock difference between the merchant's `timestamp` and ours. */
    SIGNATURE_WINDOW_MS: positiveInt(300_000),
    /** Largest request body accepted, in bytes. */
    BODY_LIMIT_BYTES: positiveInt(2 * 1024 * 1024),
    /** Most identifiers one bulkCancel / bulkCancelByQuery request may carry. */
    BULK_MAX_ITEMS: positiveInt(DEFAULT_BULK_MAX_ITEMS),
    /**
     * Which proxies' X-Forwarded-For is believed when finding a caller's address for IP allow-lists:
     * `false` (default, the peer address is the source), or a comma-separated list of proxy IPs/CIDRs.
     * Parsed into that list: empty when no proxy is trusted.
     */
    TRUST_PROXY: trustedProxies,
    /**
     * How long a merchant record is cached by each API process (and a merchant's webhook settings by each
     * worker); bounds how long a change takes to apply.
     */
    MERCHANT_CACHE_TTL_MS: nonNegativeInt(5_000),
    /** Most merchant records one API process caches (ids that name no merchant are held apart, fewer). */
    MERCHANT_CACHE_MAX_ENTRIES: positiveInt(10_000),
    /** Most bytes of merchant records one API process caches (allow-lists make some records large). */
    MERCHANT_CACHE_MAX_BYTES: positiveInt(16 * 1024 * 1024),
    /**
     * During a Postgres outage a merchant's last known record is still used (its cancels need only
     * Redis), for at most this long after it was read: a disabled merchant or a rotated secret stops
     * working within it, whatever the outage.
     */
    MERCHANT_STALE_MAX_MS: positiveInt(5 * 60_000),
    /** How long an API process reuses a readAll answer for the same merchant and filters; 0 switches it off. */
    READ_CACHE_TTL_MS: nonNegativeInt(2_000),
    /** Most readAll answers one API process keeps. */
    READ_CACHE_MAX_ENTRIES: positiveInt(10_000),
    /** Most bytes of readAll answers one API process keeps; a larger answer is served but not kept. */
    READ_CACHE_MAX_BYTES: positiveInt(32 * 1024 * 1024),
    /**
     * Tenant defaults: limits every merchant gets unless an operator sets its own, so that one merchant's
     * flood, slow upload or oversized body cannot take the API from the others (docs/design.md §10).
     *
     * Requests per second per merchant on merchant routes, counted in Redis across every API replica;
     * a merchant's own `rateLimitPerSecond` replaces it. 0 switches the default off (benchmarks).
     */
    RATE_LIMIT_PER_SECOND: nonNegativeInt(1_000),
    /**
     * How long a request waits for Redis to count it. Past this (or on an error) the API process
     * counts the merchant in a token bucket of its own, with the same limit: never no limit.
     */
    RATE_LIMIT_TIMEOUT_MS: positiveInt(100),
    /** Most merchants one API process keeps a fallback token bucket for (least recently used leave first). */
    RATE_LIMIT_FALLBACK_MAX_MERCHANTS: positiveInt(10_000),
    /**
     * Largest request body of every route but bulkCancel and bulkCancelByQuery (which take up to
     * BODY_LIMIT_BYTES), read before the signature is checked. Never more than BODY_LIMIT_BYTES.
     */
    SMALL_BODY_LIMIT_BYTES: positiveInt(16 * 1024),
    /**
     * Most bytes of request bodies one API process reads before authentication at once, across every
     * request (each reserves its declared size; bulk bodies together at most half). Past it, a new
     * body is refused with 503 and Retry-After before it is read. 64 MiB.
     */
    UNAUTHENTICATED_BODY_BYTES_MAX: positiveInt(64 * 1024 * 1024),
    /** Most time a client may take to send a whole request (headers and body); past it, 408 and the connection closed. */
    HTTP_REQUEST_TIMEOUT_MS: positiveInt(30_000),
    /** Most time a client may take to send a request's headers; past it, 408 and the connection closed. */
    HTTP_HEADERS_TIMEOUT_MS: positiveInt(30_000),

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
    /** Time the process allows itself to drain on SIGTERM before it forces the exit. */
    SHUTDOWN_TIMEOUT_MS: positiveInt(25_000),
    METRICS_ENABLED: booleanFromEnv.default(true),

    /**
     * The key ring that seals merchant and webhook secrets at rest (AES-256-GCM):
     * `kid:base64key,kid:base64key,...`, each key 32 bytes; the first seals, all of them open. Every
     * process of a deployment needs the same ring. Required with NODE_ENV=production; on a development
     * machine an unset ring is made once and kept in .secrets-keys.dev (fillDevelopmentKeyRing).
     * Parsed into its keys; an error names the bad entry, never a key.
     */
    SECRETS_KEYS: z
      .string()
      .optional()
      .transform((value, context) => {
        if (value === undefined || value.trim() === '') return undefined;
        const parsed = parseKeyRing(value);
        if (!parsed.ok) {
          context.addIssue({ code: 'custom', message: parsed.reason });
          return z.NEVER;
        }
        return parsed.keys;
      }),

    /**
     * Let webhook URLs point at loopback, private, link-local and other internal addresses. Refused
     * with NODE_ENV=production: a merchant's webhook must never become a way into the service's own
     * network. On only for development and tests, whose receivers listen on 127.0.0.1.
     */
    WEBHOOK_ALLOW_PRIVATE: booleanFromEnv.default(false),
    /**
     * `npm run seed` (the demo merchant, whose secret is public, and made-up volume data) refuses to run
     * with NODE_ENV=production unless this is true: set only for a demo environment that runs the
     * production image on purpose (docker-compose.yml's `seed` service).
     */
    SEED_ALLOWED_IN_PRODUCTION: booleanFromEnv.default(false),
    /** How long one delivery attempt may take, connection included, before it counts as failed. */
    WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
    /**
     * Multiplies the retry schedule of webhook deliveries (5 s, 5 min, 30 min, 2 h, 5 h, 10 h). 1 in
     * production; tests shrink it so that a retry takes milliseconds.
     */
    WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1),
    /** Webhook deliveries one worker has in flight at once (each waits on the network, not on Postgres). */
    WEBHOOK_DELIVERY_CONCURRENCY: positiveInt(20),

    // Retention (docs/design.md §13): how long the service keeps its own records.
    /**
     * Lifetime of the service's own records: finished jobs' audit rows (and the rewards lists and
     * slices of those jobs), webhook deliveries, and sessions whose expiry is this long past (with
     * their bet slip items). A finished job older than this answers 404. 30 days by default; 60,000
     * (one minute) at least, for tests and soaks.
     */
    RETENTION_MS: z.coerce
      .number()
      .int()
      .min(60_000, 'must be at least 60000 (one minute)')
      .default(30 * 24 * 60 * 60 * 1000),
    /**
     * How often a worker tries to sweep (one worker at a time sweeps; the others find the lock taken).
     * Unset: RETENTION_MS / 10, at most an hour. Each wait is jittered by ±20 %.
     */
    RETENTION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(1_000).optional(),
    /** Rows one sweep statement deletes at most (each statement is its own short transaction). */
    RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(5_000),
    /**
     * After a sweep, VACUUM (SKIP_LOCKED) each table it deleted from, so the space is reused at once
     * instead of when autovacuum gets to it (or never, where autovacuum is off). VACUUM takes the lock
     * autovacuum takes: reads and writes go on; only DDL on that table waits for it.
     */
    RETENTION_VACUUM: booleanFromEnv.default(true),
    /**
     * Webhook attempts in flight at once for one merchant, across every worker: a receiver that hangs
     * holds this many of the delivery slots, never all of them, so other merchants' events keep going.
     */
    WEBHOOK_MERCHANT_CONCURRENCY: positiveInt(2),
    /**
     * Events of one merchant waiting to be delivered (queued or between retries). A new event past it
     * gives up that merchant's oldest pending ones, each recorded `dropped`: a dead receiver holds a
     * bounded part of Redis.
     */
    WEBHOOK_MAX_PENDING_PER_MERCHANT: positiveInt(1_000),
    /**
     * Events a merchant may have sent on request (webhooks/redeliver and webhooks/test together) per
     * minute; past it, 429. A recovery (webhooks/recover) is bounded otherwise: one at a time per
     * merchant, queued a batch at a time while its pending events leave room.
     */
    WEBHOOK_MANUAL_SENDS_PER_MINUTE: positiveInt(60),
    /**
     * An endpoint that has failed every delivery for this long (no 2xx since its first failure) is
     * disabled until a PUT sets it again. 3 days; accepted down to 1 s for tests.
     */
    WEBHOOK_DISABLE_AFTER_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(3 * 24 * 60 * 60 * 1_000),
  })
  .superRefine((config, context) => {
    if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
      context.addIssue({
        code: 'custom',
        path: ['HTTP_HEADERS_TIMEOUT_MS'],
        message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS',
      });
    }
    const outside = config.WORKER_SHARDS?.filter((shard) => shard >= config.QUEUE_SHARDS) ?? [];
    if (outside.length > 0) {
      context.addIssue({
        code: 'custom',
        path: ['WORKER_SHARDS'],
        message: `shards are numbered 0 to ${config.QUEUE_SHARDS - 1} (QUEUE_SHARDS=${config.QUEUE_SHARDS}): ${outside.join(', ')}`,
      });
    }
    if (config.REDIS_URL === undefined && config.REDIS_CLUSTER_NODES === undefined) {
      context.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'required (or set REDIS_CLUSTER_NODES)' });
    }
    if (config.ADMIN_TOKEN !== undefined && config.ADMIN_TOKENS.some((operator) => operator.name === 'admin')) {
      context.addIssue({
        code: 'custom',
        path: ['ADMIN_TOKEN'],
        message: 'ADMIN_TOKENS already names an operator "admin": set one or the other',
      });
    }
    if (config.ADMIN_PORT !== 0 && config.ADMIN_PORT === config.PORT) {
      context.addIssue({ code: 'custom', path: ['ADMIN_PORT'], message: 'must differ from PORT' });
    }
    if (config.UNAUTHENTICATED_BODY_BYTES_MAX < 2 * config.BODY_LIMIT_BYTES) {
      context.addIssue({
        code: 'custom',
        path: ['UNAUTHENTICATED_BODY_BYTES_MAX'],
        message: `must be at least twice BODY_LIMIT_BYTES (${2 * config.BODY_LIMIT_BYTES}): bulk bodies may hold half of it`,
      });
    }
    if (config.NODE_ENV === 'production' && config.WEBHOOK_ALLOW_PRIVATE) {
      context.addIssue({
        code: 'custom',
        path: ['WEBHOOK_ALLOW_PRIVATE'],
        message:
          "must not be true with NODE_ENV=production: merchants' webhooks could then reach the service's own network",
      });
    }
    if (config.NODE_ENV === 'production' && config.SECRETS_KEYS === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['SECRETS_KEYS'],
        message:
          'required with NODE_ENV=production: the key ring that seals secrets at rest, kid:base64key,... (docs/operations.md)',
      });
    }
  });

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Every operator of the admin plane: ADMIN_TOKEN as `admin`, then ADMIN_TOKENS. Empty: the admin plane is closed. */
export function adminOperators(config: Pick<Config, 'ADMIN_TOKEN' | 'ADMIN_TOKENS'>): AdminOperator[] {
  const single = config.ADMIN_TOKEN === undefined ? [] : [{ name: 'admin', token: config.ADMIN_TOKEN }];
  return [...single, ...config.ADMIN_TOKENS];
}

/** The merchants' listener's origin as merchants reach it: PUBLIC_BASE_URL, or `http://localhost:$PORT`. */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/**
 * Loads `.env` from the working directory into the process environment when the file exists.
 * Variables already set win over the file. Tests (NODE_ENV=test) never read it, so a developer's
 * `.env` cannot change what a test process sees.
 */
export function loadDotEnv(env: Record<string, string | undefined> = process.env, file = '.env'): void {
  if (env !== process.env || env.NODE_ENV === 'test') return;
  const path = resolve(file);
  if (existsSync(path)) process.loadEnvFile(path);
}

/**
 * On a development machine (NODE_ENV unset or `development`) with no SECRETS_KEYS, the ring kept in
 * .secrets-keys.dev (made on first use), so that secrets sealed by one run open in the next. Never in
 * production (start-up refuses) nor in tests (each run brings its own ring).
 */
export function fillDevelopmentKeyRing(env: Record<string, string | undefined>): void {
  if ((env.NODE_ENV ?? 'development') !== 'development' || env.SECRETS_KEYS) return;
  env.SECRETS_KEYS = developmentKeyRing(DEVELOPMENT_KEY_RING_FILE);
}

/**
 * Tracing (docs/operations.md, "Tracing"): only the standard OpenTelemetry variables, read by the
 * preload module (telemetry/telemetry.preload.ts) before anything else is loaded, so apart from the
 * rest of the configuration. Tracing is on when an OTLP endpoint is set and OTEL_SDK_DISABLED is not
 * true; otherwise no SDK is loaded at all.
 */
const unsetWhenEmpty = (value: unknown) => (value === '' ? undefined : value);
const otlpProtocol = z.preprocess(unsetWhenEmpty, z.enum(['http/protobuf', 'http/json']).optional());
const samplerNames = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export const telemetrySchema = z
  .object({
    OTEL_SDK_DISABLED: z.preprocess(
      (value) => (typeof value === 'string' ? value.trim().toLowerCase() === 'true' : false),
      z.boolean(),
    ),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(unsetWhenEmpty, z.url({ protocol: /^https?$/ }).optional()),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.preprocess(unsetWhenEmpty, z.url({ protocol: /^https?$/ }).optional()),
    /** grpc is refused (this service ships the two HTTP exporters only); http/protobuf is the standard's default. */
    OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
    OTEL_SERVICE_NAME: z.preprocess(unsetWhenEmpty, z.string().optional()),
    OTEL_TRACES_SAMPLER: z.preprocess(unsetWhenEmpty, z.enum(samplerNames).default('parentbased_always_on')),
    /** The ratio of the two *traceidratio samplers, 0 to 1 (1 when unset). */
    OTEL_TRACES_SAMPLER_ARG: z.preprocess(unsetWhenEmpty, z.coerce.number().min(0).max(1).default(1)),
    /** Milliseconds between two exports of the spans gathered meanwhile (the standard's default, 5,000). */
    OTEL_BSP_SCHEDULE_DELAY: z.preprocess(unsetWhenEmpty, positiveInt(5_000)),
    /** Spans held for export at most; past it new ones are dropped (the standard's default, 2,048). */
    OTEL_BSP_MAX_QUEUE_SIZE: z.preprocess(unsetWhenEmpty, positiveInt(2_048)),
    /** Spans sent in one export at most, and the count that sends a batch before its delay (default 512). */
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: z.preprocess(unsetWhenEmpty, positiveInt(512)),
    /** Milliseconds one export may take before it is given up (the standard's default, 30,000). */
    OTEL_BSP_EXPORT_TIMEOUT: z.preprocess(unsetWhenEmpty, positiveInt(30_000)),
  })
  .superRefine((otel, context) => {
    // The SDK would shrink such a batch to the queue with a warning; refused here, like any other wrong setting.
    if (otel.OTEL_BSP_MAX_EXPORT_BATCH_SIZE > otel.OTEL_BSP_MAX_QUEUE_SIZE) {
      context.addIssue({
        code: 'custom',
        path: ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE'],
        message:
          'must not be larger than OTEL_BSP_MAX_QUEUE_SIZE ' +
          `(${otel.OTEL_BSP_MAX_EXPORT_BATCH_SIZE} > ${otel.OTEL_BSP_MAX_QUEUE_SIZE})`,
      });
    }
  });

export interface TelemetrySettings {
  /** Where spans go (the traces endpoint itself), or null when tracing is off. */
  tracesUrl: string | null;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string | undefined;
  sampler: (typeof samplerNames)[number];
  samplerRatio: number;
  exportDelayMs: number;
  exportQueueSize: number;
  exportBatchSize: number;
  exportTimeoutMs: number;
}

/** The tracing settings, or a ConfigError naming the variable. */
export function loadTelemetrySettings(env: Record<string, string | undefined> = process.env): TelemetrySettings {
  const parsed = telemetrySchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const otel = parsed.data;
  // The standard: a signal's own endpoint is used as it is; the general one gets /v1/traces appended.
  const base = otel.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const url = otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base}/v1/traces`);
  return {
    tracesUrl: otel.OTEL_SDK_DISABLED || url === undefined ? null : url,
    protocol: otel.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? otel.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    serviceName: otel.OTEL_SERVICE_NAME,
    sampler: otel.OTEL_TRACES_SAMPLER,
    samplerRatio: otel.OTEL_TRACES_SAMPLER_ARG,
    exportDelayMs: otel.OTEL_BSP_SCHEDULE_DELAY,
    exportQueueSize: otel.OTEL_BSP_MAX_QUEUE_SIZE,
    exportBatchSize: otel.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    exportTimeoutMs: otel.OTEL_BSP_EXPORT_TIMEOUT,
  };
}

/** What `npm start` assumes when nothing is set: the default local ports and a database of its own. */
export const LOCAL_DEFAULTS = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/rewards',
  REDIS_URL: 'redis://127.0.0.1:6379',
} as const;

/**
 * The environment `npm start` runs with and hands to its child processes: `.env` loaded, the local
 * defaults filled in where a variable is unset.
 */
export function localEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  loadDotEnv(env);
  fillDevelopmentKeyRing(env);
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) merged[key] = value;
  for (const [key, value] of Object.entries(LOCAL_DEFAULTS)) if (!merged[key]) merged[key] = value;
  return merged;
}

/**
 * Entry points call this: `.env` is loaded when present, and a wrong variable ends the process with
 * its name rather than a stack.
 */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    loadDotEnv(env);
    fillDevelopmentKeyRing(env);
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
