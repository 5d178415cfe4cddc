import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';

/**
 * The only place that reads the environment. Every process parses it once at start-up; a bad value
 * stops the process with a message naming the variable (see `loadConfigOrExit`).
 */

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** A missing value is reported as "required", a present but wrong one by what it must be. */
const requiredUrl = (protocol: RegExp, shape: string) =>
  z.url({
    protocol,
    error: (issue) => (issue.input === undefined || issue.input === '' ? 'required' : `must be a ${shape} URL`),
  });

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const nonNegativeInt = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: requiredUrl(/^postgres(ql)?$/, 'postgres://'),
  REDIS_URL: requiredUrl(/^rediss?$/, 'redis://'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Bearer token of the admin API and queue dashboard; both are disabled while it is unset. */
  ADMIN_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  /** Accepted clock difference between the merchant's `timestamp` and ours. */
  SIGNATURE_WINDOW_MS: positiveInt(300_000),
  /** Largest request body accepted, in bytes. */
  BODY_LIMIT_BYTES: positiveInt(2 * 1024 * 1024),
  /** Most identifiers one bulkCancel / bulkCancelByQuery request may carry. */
  BULK_MAX_ITEMS: positiveInt(10_000),
  /**
   * Which proxies' X-Forwarded-For is believed when finding a caller's address for IP allow-lists:
   * `false` (default, the peer address is the source), or a comma-separated list of proxy IPs/CIDRs.
   */
  TRUST_PROXY: z.string().default('false'),
  /** How long a merchant record is cached by each API process; bounds how long a change takes to apply. */
  MERCHANT_CACHE_TTL_MS: nonNegativeInt(5_000),
  /** How long an API process reuses a readAll answer for the same merchant and filters; 0 switches it off. */
  READ_CACHE_TTL_MS: nonNegativeInt(2_000),
  /** Requests per second per merchant on merchant routes; 0 switches rate limiting off. */
  RATE_LIMIT_PER_SECOND: nonNegativeInt(0),

  /** Redis key prefix of every queue. The hash tag keeps one queue's keys in one Redis Cluster slot. */
  QUEUE_PREFIX: z.string().min(1).default('{rewards}'),
  /** How long the API waits for Redis to store a job before it answers 503. */
  ENQUEUE_TIMEOUT_MS: positiveInt(1_500),
  /** Above this many waiting cancellation jobs the API answers 503 instead of queueing more; 0 = no cap. */
  QUEUE_MAX_WAITING: nonNegativeInt(0),

  DB_POOL_SIZE: positiveInt(10),
  /** Rewards per transaction in the worker. */
  CANCEL_BATCH_SIZE: positiveInt(10_000),
  /** A bulk job with more identifiers than this is split into child jobs shared by all workers. */
  FANOUT_THRESHOLD: positiveInt(2_000),
  /** Identifiers (ids, external ids or players) per child job of a split bulk job. */
  FANOUT_CHUNK_SIZE: positiveInt(1_000),
  /** Concurrent single-cancel jobs one worker holds; they are applied together (coalesced). */
  WORKER_CANCEL_CONCURRENCY: positiveInt(500),
  /**
   * Concurrent bulk jobs (and child jobs) one worker runs. One per replica by default: each is bound by
   * one Postgres backend's CPU, so throughput grows by adding replicas (or cores), not by piling
   * transactions onto the same cores, which only slows the reads beside them.
   */
  WORKER_BULK_CONCURRENCY: positiveInt(1),
  /** Most single cancels applied by one UPDATE; 1 switches coalescing off (one UPDATE per job). */
  COALESCE_MAX_BATCH: positiveInt(500),
  /** How long a coalescing batch waits for more single cancels before it is applied. */
  COALESCE_WINDOW_MS: nonNegativeInt(5),
  /**
   * How long a worker's hold on a job lasts without renewal. A worker that dies (kill -9, lost node)
   * gives its jobs back after this long; a live worker renews the lock every half of it.
   */
  WORKER_LOCK_DURATION_MS: positiveInt(30_000),
  /** Time the process allows itself to drain on SIGTERM before it forces the exit. */
  SHUTDOWN_TIMEOUT_MS: positiveInt(25_000),
  METRICS_ENABLED: booleanFromEnv.default(true),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

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
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
