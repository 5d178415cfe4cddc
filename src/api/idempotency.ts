import { createHash, randomBytes } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { noAnswerWithin, withDeadline } from '../shared/deadline.js';
import { AppError } from '../shared/errors.js';
import type { RedisConnection } from '../shared/queue/redis.js';
import { idempotencyRecordKey, keyLifetimes } from '../shared/queue/redis-keys.js';

/**
 * Idempotency keys of the cancel routes: a merchant that sends `Idempotency-Key` may repeat the
 * request (a timeout, a lost answer) and get the first request's job id back instead of a second job.
 *
 * One Redis string per merchant and key (redis-keys.ts, with its lifetimes), so every API replica sees
 * the same record. Records are many (one per keyed request for 24 h), so each is kept small (under 150
 * bytes of Redis memory, docs/scaling.md): the key is a 128-bit digest of the merchant and its key,
 * and the value is the request's fingerprint cut to 120 bits followed by one of
 * - `t` + a random token while the first request stores its job, kept only
 *   keyLifetimes.idempotencyPendingMs, so a process that dies between the two steps blocks the key for
 *   seconds, not a day;
 * - `j` + the job id's 16 bytes (base64url) once stored (`J` + the id as it is, for an id that is not a
 *   UUID), kept keyLifetimes.idempotencyRecordMs (24 h) from the first request's answer.
 * Taking the key is one script (read, or create when absent), so two replicas racing with the same key
 * cannot both queue a job.
 */

/** 1 to 255 visible ASCII characters (no space, no control characters). */
export const IdempotencyHeadersSchema = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters')
    .optional()
    .openapi({
      description:
        'Makes the request safe to repeat for 24 hours: the same key with the same fields answers the first ' +
        "request's X-Job-Id (with Idempotent-Replayed: true) and queues nothing; the same key with other " +
        'fields is 422 (errorCode 12); while the first request is still being stored, 409 (errorCode 13). ' +
        'Keys are per merchant. Ignored by a dry run.',
      example: 'order-4711-cancel',
    }),
});

/** Creates the record when absent; answers the record that was there otherwise. */
const TAKE_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

/** Deletes the record only while it is still this request's own unfinished one. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** Characters of the fingerprint kept in a record: 120 bits, ample against a chance match. */
const FINGERPRINT_CHARS = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function pendingRecord(fingerprint: string): string {
  return `${fingerprint.slice(0, FINGERPRINT_CHARS)}t${randomBytes(12).toString('base64url')}`;
}

function doneRecord(fingerprint: string, jobId: string): string {
  const id = UUID.test(jobId) ? `j${Buffer.from(jobId.replaceAll('-', ''), 'hex').toString('base64url')}` : `J${jobId}`;
  return `${fingerprint.slice(0, FINGERPRINT_CHARS)}${id}`;
}

interface StoredRecord {
  fingerprint: string;
  /** The job id answered, once stored; undefined while the first request stores it. */
  jobId?: string;
}

function readRecord(value: string): StoredRecord {
  const fingerprint = value.slice(0, FINGERPRINT_CHARS);
  const kind = value[FINGERPRINT_CHARS];
  const rest = value.slice(FINGERPRINT_CHARS + 1);
  if (kind === 'J') return { fingerprint, jobId: rest };
  if (kind !== 'j') return { fingerprint };
  const hex = Buffer.from(rest, 'base64url').toString('hex');
  return {
    fingerprint,
    jobId: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
  };
}

export interface IdempotencyStore {
  redis: RedisConnection;
  prefix: string;
  /** How long a Redis step may take before the request answers 503. */
  timeoutMs: number;
}

/** What claiming a key decided: a replay of a stored job, or this request goes ahead. */
export type IdempotencyClaim =
  | { replayedJobId: string }
  | {
      replayedJobId?: undefined;
      /** Records the job id answered for this key. */
      complete(jobId: string): Promise<void>;
      /** Frees the key after the job could not be stored, so a retry can proceed. */
      release(): Promise<void>;
    };

/**
 * The request fields a key is bound to: everything validated but the signing fields (`timestamp` and
 * `hash` change on every retry; `merchantId` is the key's scope already), as a SHA-256 of JSON with
 * sorted keys, with absent and null fields alike. The operation is part of it: the same key on another
 * cancel route is other fields.
 */
export function requestFingerprint(operation: string, body: Record<string, unknown>): string {
  const { timestamp: _timestamp, hash: _hash, merchantId: _merchantId, ...fields } = body;
  return createHash('sha256').update(stableJson({ operation, fields })).digest('base64url');
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => stableJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined && item !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function recordKey(prefix: string, merchantId: string, idempotencyKey: string): string {
  // Hashed, merchant and key together: every record key has the same short length whatever the merchant
  // chose, and 128 bits keep two merchants' keys apart.
  const digest = createHash('sha256')
    .update(`${merchantId.toLowerCase()}\0${idempotencyKey}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
  return idempotencyRecordKey(prefix, digest);
}

/**
 * Takes the key for this request, or says why not: a replay (the stored job id), 422 when the key
 * was used with other fields, 409 while its first request is still storing the job.
 */
export async function claimIdempotencyKey(
  store: IdempotencyStore,
  merchantId: string,
  idempotencyKey: string,
  fingerprint: string,
): Promise<IdempotencyClaim> {
  const key = recordKey(store.prefix, merchantId, idempotencyKey);
  const mine = pendingRecord(fingerprint);
  const existing = (await withinDeadline(store, () =>
    store.redis.eval(TAKE_SCRIPT, 1, key, mine, keyLifetimes.idempotencyPendingMs),
  )) as string | null;

  if (existing === null) {
    return {
      complete: async (jobId) => {
        const done = doneRecord(fingerprint, jobId);
        await withinDeadline(store, () => store.redis.set(key, done, 'PX', keyLifetimes.idempotencyRecordMs));
      },
      release: async () => {
        await withinDeadline(store, () => store.redis.eval(RELEASE_SCRIPT, 1, key, mine));
      },
    };
  }
  const record = readRecord(existing);
  if (record.fingerprint !== fingerprint.slice(0, FINGERPRINT_CHARS)) throw new AppError('IDEMPOTENCY_CONFLICT');
  if (record.jobId === undefined) {
    throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed', {
      retryAfterSeconds: 1,
    });
  }
  return { replayedJobId: record.jobId };
}

async function withinDeadline<T>(store: IdempotencyStore, work: () => Promise<T>): Promise<T> {
  try {
    return await withDeadline(work(), store.timeoutMs, () => noAnswerWithin(store.timeoutMs));
  } catch (error) {
    throw new AppError('SERVICE_UNAVAILABLE', undefined, {
      retryAfterSeconds: 1,
      logDetail: 'redis (idempotency key)',
      cause: error,
    });
  }
}
