import { hash } from 'node:crypto';
import { noAnswerWithin, withDeadline } from '../../shared/deadline.js';
import type { RedisConnection } from '../../shared/queue/redis.js';
import { urlSignatureKey } from '../../shared/queue/redis-keys.js';

/**
 * Version-1 signatures seen in a URL (docs/design.md, "Threat model"). A v1 signature covers only
 * merchantId and timestamp, and GET /betSlip carries it in its query string, which proxies, load
 * balancers and browser histories log. So a GET /betSlip marks its triple as seen in a URL until the
 * signature leaves its window, and every other request presenting the triple (a cancel, an abort, a
 * read) is refused as unsigned. Other bet slip requests (GET or POST) may still present it: a
 * merchant's server signs bet slip URLs for many players in the same millisecond, and a bet slip needs
 * the player's session token besides, which is that route's real credential.
 *
 * Version-1 POSTs are not bound to anything: clients of one merchant sign several requests in the
 * same millisecond with the same triple, and must keep working. Version 2 binds the body instead.
 */

export interface SignedTriple {
  merchantId: string;
  timestamp: number;
  /** As sent: 1 to 64 hex characters, any case (normalised here, as the verifier does). */
  hash: string;
}

export interface UrlSignatureStore {
  redis: RedisConnection;
  prefix: string;
  windowMs: number;
}

function tripleKey(store: UrlSignatureStore, triple: SignedTriple): string {
  // The hash spelled as the verifier reads it, so leading zeros dropped or upper case name the same triple.
  // One-shot: no Hash object per request (the key is computed for every v1 request on most routes).
  const digest = hash('sha256', `${triple.timestamp}.${triple.hash.toLowerCase().padStart(64, '0')}`, 'buffer')
    .subarray(0, 16)
    .toString('base64url');
  return urlSignatureKey(store.prefix, triple.merchantId, digest);
}

/** Marks the triple as seen in a URL until the signature's window ends (a repeat changes nothing). */
export async function markSeenInUrl(store: UrlSignatureStore, triple: SignedTriple, timeoutMs: number): Promise<void> {
  const expiresAt = Math.max(triple.timestamp + store.windowMs, Date.now()) + 1;
  await withDeadline(store.redis.set(tripleKey(store, triple), '1', 'PXAT', expiresAt, 'NX'), timeoutMs, () =>
    noAnswerWithin(timeoutMs),
  );
}

/** True when a GET /betSlip URL has carried this triple: no other request may present it. */
export async function isSeenInUrl(store: UrlSignatureStore, triple: SignedTriple, timeoutMs: number): Promise<boolean> {
  const exists = await withDeadline(store.redis.exists(tripleKey(store, triple)), timeoutMs, () =>
    noAnswerWithin(timeoutMs),
  );
  return exists === 1;
}
