import { hash } from 'node:crypto';
import { noAnswerWithin, withDeadline } from '../../shared/process/deadline.js';
import type { RedisConnection } from '../../shared/redis/redis.js';
import { urlSignatureKey } from '../../shared/redis/redis-keys.js';

/**
 * Version-1 signatures seen in a URL (docs/design.md, "Threat model"). A v1 signature covers only
 * merchantId and timestamp, and GET /betSlip carries it in its query string, which proxies, load
 * balancers and browser histories log. So a GET /betSlip marks its triple as seen in a URL until the
 * signature leaves its window, as soon as the signature holds and whatever the answer (a 403 or a 429
 * URL is logged as well as a 200 one), and every other request presenting the triple (a cancel, an
 * abort, a read) is refused as unsigned, before it is charged to the merchant's rate. Other bet slip requests (GET or POST) may still present it: a
 * merchant's server signs bet slip URLs for many players in the same millisecond, and a bet slip needs
 * the player's session token besides, which is that route's real credential.
 *
 * Version-1 POSTs are not bound to anything: clients of one merchant sign several requests in the
 * same millisecond with the same triple, and must keep working. Version 2 binds the body instead.
 */

/** A version-1 signature as parsed: the one form in which it is verified and bound, whatever its spelling. */
export interface SignedTriple {
  /** The merchant's id as the directory holds it. */
  merchantId: string;
  /** Epoch ms, as a number: a timestamp sent as a JSON number or as digits is the same timestamp. */
  timestamp: number;
  /** The digest's 32 bytes (signature.ts `parseHash`): upper case or dropped leading zeros give the same. */
  digest: Buffer;
}

export interface UrlSignatureStore {
  redis: RedisConnection;
  prefix: string;
  windowMs: number;
}

/**
 * How far ahead of the server clock a triple is still bound, in signature windows. A triple signed by a
 * clock running ahead is refused (401) now but enters its window later, so it is bound until it leaves
 * it: up to one window beyond the window's far edge (a clock 10 minutes ahead, at the default), a key
 * living at most three windows. Further ahead, every request of that clock fails anyway, and a key per
 * request held that long would cost Redis more than the drift is worth.
 */
const MARK_AHEAD_WINDOWS = 2;

/**
 * The Redis key naming this triple: the merchant, then a digest of `<timestamp>.<digest as 64 lower-case
 * hex>`. Two spellings of one signature give one key; two signatures never share one (128 bits).
 */
export function urlBindingKey(prefix: string, triple: SignedTriple): string {
  // One-shot: no Hash object per request (the key is computed for every v1 request on most routes).
  const digest = hash('sha256', `${triple.timestamp}.${triple.digest.toString('hex')}`, 'buffer')
    .subarray(0, 16)
    .toString('base64url');
  return urlSignatureKey(prefix, triple.merchantId, digest);
}

/**
 * Marks the triple as seen in a URL until the signature's window ends (a repeat changes nothing). A
 * triple already past its window can never sign anything, nor, in practice, one far ahead: nothing is written.
 */
export async function markSeenInUrl(store: UrlSignatureStore, triple: SignedTriple, timeoutMs: number): Promise<void> {
  const now = Date.now();
  const endsAt = triple.timestamp + store.windowMs;
  if (endsAt < now || triple.timestamp - now > MARK_AHEAD_WINDOWS * store.windowMs) return;
  await withDeadline(
    store.redis.set(urlBindingKey(store.prefix, triple), '1', 'PXAT', endsAt + 1, 'NX'),
    timeoutMs,
    () => noAnswerWithin(timeoutMs),
  );
}

/** True when a GET /betSlip URL has carried this triple: no other request may present it. */
export async function isSeenInUrl(store: UrlSignatureStore, triple: SignedTriple, timeoutMs: number): Promise<boolean> {
  const exists = await withDeadline(store.redis.exists(urlBindingKey(store.prefix, triple)), timeoutMs, () =>
    noAnswerWithin(timeoutMs),
  );
  return exists === 1;
}
