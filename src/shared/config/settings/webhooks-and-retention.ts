import { z } from 'zod';
import { parseKeyRing } from '../../secrets/key-ring-text.js';
import { booleanFromEnv, positiveInt } from './setting-types.js';

/** Secrets at rest, production guards, webhook delivery and its per-merchant bounds, and retention. */
export const webhookAndRetentionSettings = {
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
  /**
   * After webhooks/rotateSecret, how long the replaced secret keeps signing beside the new one (each
   * delivery carries both signatures): the time a merchant has to deploy the new secret. 0 (a hard
   * switch) to 30 days.
   */
  WEBHOOK_PREVIOUS_SECRET_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 24 * 60 * 60 * 1000)
    .default(24 * 60 * 60 * 1000),

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
  /**
   * A webhook delivery still pending this long after it was made has lost its delivery job (its retries
   * end about 17.5 h after the first attempt): the sweeper removes it once it is older than both this
   * and RETENTION_MS. At least a day, so no delivery whose retries may still run is removed.
   */
  RETENTION_ABANDONED_DELIVERY_MS: z.coerce
    .number()
    .int()
    .min(24 * 60 * 60 * 1000, 'must be at least 86400000 (a day): retries run for about 17.5 hours')
    .default(7 * 24 * 60 * 60 * 1000),
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
};
