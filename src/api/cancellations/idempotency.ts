import { createHash } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { noAnswerWithin, withDeadline } from '../../shared/process/deadline.js';
import type { RedisConnection } from '../../shared/redis/redis.js';
import {
  idempotencyRecordKey,
  keyLifetimes,
  merchantRecordCountKey,
  signatureReplayKey,
} from '../../shared/redis/redis-keys.js';
import type { ShardLayout } from '../../shared/redis/shards.js';
import { type BodyBoundSignature, canonicalSignatureHeader } from '../auth/signature.js';
import { doneRecord, pendingRecord, readRecord, sameFingerprint } from './idempotency-record.js';
import { countArguments, countScript, type RecordCount, recordBoundReached } from './record-count.js';

/**
 * Idempotency keys of the cancel routes: a merchant that sends `Idempotency-Key` may repeat the
 * request (a timeout, a lost answer) and get the first request's job id back instead of a second job.
 *
 * The same record answers a version-2 request sent again (the same `X-Signature`, within its window):
 * a captured v2 request replayed without its Idempotency-Key is a retry, answered with the first job's
 * id, whatever happened since (docs/design.md, "Threat model"). Its key is a digest of the header as
 * parsed (`t` as a number, the digest's bytes), never of the text as sent: a replay re-spelled (hex
 * upper-cased, zeros before `t`) finds the same record. The signature itself is never stored, and the
 * record lives until the header leaves its window.
 *
 * One Redis string per merchant and key (redis-keys.ts, with its lifetimes), under the merchant's queue
 * shard prefix (shards.ts; while the shard count changes, a record under the merchant's previous shard
 * still answers, so a repeat is never queued twice), so every API replica sees
 * the same record. Records are many (one per keyed request for 24 h), so each is kept small (under 150
 * bytes of Redis memory, docs/scaling.md): the key is a 128-bit digest of the merchant and its key,
 * and the value is the request's fingerprint cut to 120 bits followed by one of
 * - `p` + the job id chosen before the job is stored (16 bytes, base64url) + the time of the claim
 *   (base 36) while a bulk request stores its job, kept as long as a finished record: a request whose
 *   store's outcome is unknown (it timed out) may still have stored the job under that id. Before the
 *   store's deadline has passed a retry is 409; after it, the retry takes the record over (a new claim
 *   time, the same id) and is never answered that id without a job behind it: it finds the job stored
 *   under the id, or stores it there itself (enqueue-cancellation.ts);
 * - `t` + a random token while a single cancel stores its job (its id is chosen inside its batch), kept
 *   only keyLifetimes.idempotencyPendingMs: a second single cancel of a reward changes nothing more;
 * - `j` + the job id's 16 bytes (base64url) once stored (`J` + the id as it is, for an id that is not a
 *   UUID), kept keyLifetimes.idempotencyRecordMs (24 h) from the first request's answer.
 * Taking the key is one script (read, or create when absent), so two replicas racing with the same key
 * cannot both queue a job. The same script counts the records each merchant makes and refuses one past
 * its bound (record-count.ts), in the same round trip.
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
        'Keys are per merchant, and bounded: a new key past the keys a merchant may have recorded at once ' +
        '(1,000,000 in 24 hours by default) is 429 (errorCode 7) with Retry-After. Ignored by a dry run.',
      example: 'order-4711-cancel',
    }),
});

/**
 * Creates the record when absent, unless the merchant's count of records (KEYS[2], ARGV[4..7]) is at
 * its bound (then `{oldest bucket}`); answers the record that was there otherwise, whatever the count.
 */
const TAKE_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
${countScript(2, 4)}
redis.call('SET', KEYS[1], ARGV[1], ARGV[3], ARGV[2])
return false
`;

/** Replaces the record, keeping its expiry, only while it is still the value this request read. */
const SWAP_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
`;

/** Deletes the record only while it is still this request's own unfinished one. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** What a pending record's store may take beyond its deadline before a retry takes the record over. */
const PENDING_GRACE_MS = 1_000;

export interface IdempotencyStore {
  redis: RedisConnection;
  /** Where the merchant's records live. */
  layout: ShardLayout;
  /** How long a Redis step may take before the request answers 503. */
  timeoutMs: number;
  /** Most records of each kind one merchant may have at once (0: no bound; record-count.ts). */
  recordsPerMerchant: { idempotencyKeys: number; signatureReplays: number };
}

/** What claiming a key decided: a replay of a stored job, or this request goes ahead. */
export type IdempotencyClaim = { replayedJobId: string } | HeldRecord;

/** A record this request holds: it stores the job, then completes the record with its id. */
export interface HeldRecord {
  replayedJobId?: undefined;
  /**
   * Set when the record named a planned job id whose first store's outcome is unknown, and that store's
   * deadline has passed: this request has taken the record over, and must find the job stored under
   * this id or store it there itself; it never answers the id without a job behind it.
   */
  unsettledJobId?: string;
  /** Records the job id answered for this key. */
  complete(jobId: string): Promise<void>;
  /**
   * Frees the key after the job was certainly not stored, so a retry can proceed; kept while it names
   * an id an earlier store may still land under (a retry then plans no other id, so no second job).
   */
  release(): Promise<void>;
  /** Names `jobId` (another record's unsettled id) as this record's planned job instead of its own. */
  adopt(jobId: string): Promise<void>;
}

/** Where a record lives and how long a finished one is kept. */
interface RecordPlace {
  key: string;
  /** PX (ms from now) or PXAT (epoch ms) of a finished record, and of a pending one with a planned job id. */
  expiry: { mode: 'PX' | 'PXAT'; value: number };
  /** The same record under the merchant's previous shard, while the shard count changes. */
  earlierKey?: string | undefined;
  /** The merchant's count of records of this kind, and what they are called in a refusal. */
  count: RecordCount & { what: string };
}

/**
 * The request fields a key is bound to: everything validated but the signing fields (`timestamp` and
 * `hash` change on every retry; `merchantId` is the key's scope already), as a SHA-256 of JSON with
 * sorted keys, with absent and null fields alike. Every list of the cancel routes (ids, externalIds,
 * playerIds) is a set, so lists count as their sorted distinct entries: a retry that rebuilt its list
 * in another order is the same request, not a 422. The operation is part of it: the same key on another
 * cancel route is other fields.
 */
export function requestFingerprint(operation: string, body: Record<string, unknown>): string {
  const { timestamp: _timestamp, hash: _hash, merchantId: _merchantId, ...fields } = body;
  return createHash('sha256').update(stableJson({ operation, fields })).digest('base64url');
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) {
    const items = [...new Set(value.map((item) => stableJson(item ?? null)))].sort();
    return `[${items.join(',')}]`;
  }
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
 * was used with other fields, 409 while its first request is still storing the job. `plannedJobId`:
 * the id a bulk job will be stored under (omitted for a single cancel, whose id its batch chooses).
 */
export async function claimIdempotencyKey(
  store: IdempotencyStore,
  merchantId: string,
  idempotencyKey: string,
  fingerprint: string,
  plannedJobId?: string,
): Promise<IdempotencyClaim> {
  const previousPrefix = store.layout.previousMerchantPrefix(merchantId);
  const prefix = store.layout.merchantPrefix(merchantId);
  const place: RecordPlace = {
    key: recordKey(prefix, merchantId, idempotencyKey),
    expiry: { mode: 'PX', value: keyLifetimes.idempotencyRecordMs },
    earlierKey: previousPrefix === undefined ? undefined : recordKey(previousPrefix, merchantId, idempotencyKey),
    // A record lives 24 h from its claim, or from its answer (at most the store's deadline later).
    count: {
      key: merchantRecordCountKey(prefix, merchantId, 'i'),
      bound: store.recordsPerMerchant.idempotencyKeys,
      lifetimeMs: keyLifetimes.idempotencyRecordMs + store.timeoutMs,
      what: 'Idempotency-Key records',
    },
  };
  return claimRecord(store, place, fingerprint, plannedJobId);
}

/**
 * The Redis key of a version-2 request's replay record: the merchant, then a digest of the header in
 * its canonical spelling (signature.ts). Every spelling of one signature gives one key (the same key
 * as a canonically spelled header always had), and two signatures never share one (128 bits).
 */
export function signatureReplayRecordKey(prefix: string, merchantId: string, signature: BodyBoundSignature): string {
  const digest = createHash('sha256')
    .update(canonicalSignatureHeader(signature))
    .digest()
    .subarray(0, 16)
    .toString('base64url');
  return signatureReplayKey(prefix, merchantId, digest);
}

/**
 * The replay record of a version-2 request, by its parsed `X-Signature`, kept until the header leaves
 * its window (`t` + windowMs): the same answers as for an Idempotency-Key.
 */
export async function claimSignatureReplay(
  store: IdempotencyStore,
  merchantId: string,
  signature: BodyBoundSignature,
  windowMs: number,
  fingerprint: string,
  plannedJobId?: string,
): Promise<IdempotencyClaim> {
  const previousPrefix = store.layout.previousMerchantPrefix(merchantId);
  const prefix = store.layout.merchantPrefix(merchantId);
  const place: RecordPlace = {
    key: signatureReplayRecordKey(prefix, merchantId, signature),
    expiry: { mode: 'PXAT', value: Math.max(signature.timestamp + windowMs, Date.now()) + 1 },
    earlierKey:
      previousPrefix === undefined ? undefined : signatureReplayRecordKey(previousPrefix, merchantId, signature),
    // `t` may be up to a window ahead of the clock, so a record lives at most two windows.
    count: {
      key: merchantRecordCountKey(prefix, merchantId, 'sig'),
      bound: store.recordsPerMerchant.signatureReplays,
      lifetimeMs: 2 * windowMs,
      what: 'version-2 replay records',
    },
  };
  return claimRecord(store, place, fingerprint, plannedJobId);
}

async function claimRecord(
  store: IdempotencyStore,
  place: RecordPlace,
  fingerprint: string,
  plannedJobId: string | undefined,
): Promise<IdempotencyClaim> {
  const { key, expiry, earlierKey, count } = place;
  const now = Date.now();
  const mine = pendingRecord(fingerprint, plannedJobId, now);
  // A single cancel's pending record is short-lived; a planned job id's is kept like a finished record.
  const pendingExpiry =
    plannedJobId !== undefined
      ? expiry
      : expiry.mode === 'PX'
        ? { mode: 'PX', value: Math.min(expiry.value, keyLifetimes.idempotencyPendingMs) }
        : { mode: 'PXAT', value: Math.min(expiry.value, now + keyLifetimes.idempotencyPendingMs) };
  // While the shard count changes, the first request may have recorded its job under the previous shard.
  const earlier = earlierKey === undefined ? null : await withinDeadline(store, () => store.redis.get(earlierKey));
  let existing = earlier;
  if (existing === null) {
    const taken = (await withinDeadline(store, () =>
      store.redis.eval(
        TAKE_SCRIPT,
        2,
        key,
        count.key,
        mine,
        pendingExpiry.value,
        pendingExpiry.mode,
        ...countArguments(count, now),
      ),
    )) as string | [number] | null;
    if (Array.isArray(taken)) throw recordBoundReached(count, count.what, Number(taken[0]), now);
    if (taken === null) return heldRecord(store, key, expiry, fingerprint, mine);
    existing = taken;
  }
  const foundAt = earlier === null ? key : (earlierKey as string);

  const record = readRecord(existing);
  if (!sameFingerprint(record, fingerprint)) throw new AppError('IDEMPOTENCY_CONFLICT');
  // A planned job id whose store's deadline has passed: the job is stored under it, or never will be
  // by that store (a late write of it is the same job: BullMQ keeps one job per id). This request takes
  // the record over and settles it: it finds the job, or stores it under that id (enqueue-cancellation.ts).
  if (record.planned && Date.now() - record.planned.claimedAt > store.timeoutMs + PENDING_GRACE_MS) {
    const takenOver = pendingRecord(fingerprint, record.planned.jobId, Date.now());
    const swapped = await withinDeadline(store, () => store.redis.eval(SWAP_SCRIPT, 1, foundAt, existing, takenOver));
    if (swapped !== 1) throw stillBeingProcessed();
    return heldRecord(store, foundAt, expiry, fingerprint, takenOver, record.planned.jobId);
  }
  if (record.jobId === undefined) throw stillBeingProcessed();
  return { replayedJobId: record.jobId };
}

function stillBeingProcessed(): AppError {
  return new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed', {
    retryAfterSeconds: RETRY_SOON_SECONDS,
  });
}

/** The record this request holds at `key`, whose value is `pending` until it is completed. */
function heldRecord(
  store: IdempotencyStore,
  key: string,
  expiry: RecordPlace['expiry'],
  fingerprint: string,
  pending: string,
  unsettledJobId?: string,
): HeldRecord {
  let value = pending;
  let namesUnsettledStore = unsettledJobId !== undefined;
  return {
    unsettledJobId,
    complete: async (jobId) => {
      const done = doneRecord(fingerprint, jobId);
      await withinDeadline(store, () =>
        expiry.mode === 'PX'
          ? store.redis.set(key, done, 'PX', expiry.value)
          : store.redis.set(key, done, 'PXAT', expiry.value),
      );
    },
    release: async () => {
      if (namesUnsettledStore) return;
      await withinDeadline(store, () => store.redis.eval(RELEASE_SCRIPT, 1, key, value));
    },
    adopt: async (jobId) => {
      const next = pendingRecord(fingerprint, jobId, Date.now());
      const swapped = await withinDeadline(store, () => store.redis.eval(SWAP_SCRIPT, 1, key, value, next));
      if (swapped !== 1) throw stillBeingProcessed();
      value = next;
      namesUnsettledStore = true;
    },
  };
}

async function withinDeadline<T>(store: IdempotencyStore, work: () => Promise<T>): Promise<T> {
  try {
    return await withDeadline(work(), store.timeoutMs, () => noAnswerWithin(store.timeoutMs));
  } catch (error) {
    throw new AppError('SERVICE_UNAVAILABLE', undefined, {
      retryAfterSeconds: RETRY_SOON_SECONDS,
      logDetail: 'redis (idempotency key)',
      cause: error,
    });
  }
}
