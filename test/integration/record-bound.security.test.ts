import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimIdempotencyKey, requestFingerprint } from '../../src/api/cancellations/idempotency.js';
import { merchantRecordCountKey } from '../../src/shared/redis/redis-keys.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { bodyBoundHeaders, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// One merchant cannot fill Redis for all: the records made per request (Idempotency-Key records, 24 h;
// version-2 replay records, two signature windows) are bounded per merchant. Past the bound a request
// that would make a new record is 429 errorCode 7 with Retry-After and stores nothing; repeats of
// records that exist still replay; other merchants, and requests that make no record, are unaffected.

const KEYED_BOUND = 3;
const REPLAY_BOUND = 2;

const { env, api } = useTestContext({
  settings: {
    IDEMPOTENCY_RECORDS_PER_MERCHANT: String(KEYED_BOUND),
    SIGNATURE_REPLAY_RECORDS_PER_MERCHANT: String(REPLAY_BOUND),
  },
  api: true,
});
let replica: TestApi;

beforeAll(async () => {
  replica = await startTestApi(env);
});
afterAll(async () => {
  await replica?.close();
});

const keyed = (via: TestApi, merchant: MerchantFixture, externalId: string, key: string) =>
  via.post(cancelPaths.cancel, signedBody(merchant, { externalId }), { 'Idempotency-Key': key });

/** A version-2 cancel: the body and its X-Signature, sent as they are each time. */
function v2Cancel(merchant: MerchantFixture, externalId: string) {
  const body = JSON.stringify(signedBody(merchant, { externalId }));
  const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: cancelPaths.cancel, body });
  return (via: TestApi) => via.post(cancelPaths.cancel, body, headers);
}

async function expectBoundReached(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(await response.json()).toMatchObject({ errorCode: 7 });
  expect(response.headers.get('x-job-id')).toBeNull();
  // The records counted were all made just now: they leave the count when they expire, about a day on.
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThan(0);
}

describe('records per merchant in Redis', () => {
  it('past IDEMPOTENCY_RECORDS_PER_MERCHANT a fresh Idempotency-Key is 429 errorCode 7; old keys replay, others are served', async () => {
    const alice = await createMerchant(env.db);
    const bob = await createMerchant(env.db);
    const jobIds: string[] = [];
    for (let index = 0; index < KEYED_BOUND; index++) {
      // Both replicas count into the same bound.
      const response = await keyed(index % 2 === 0 ? api : replica, alice, `keyed-${index}`, `key-${index}`);
      expect(response.status).toBe(200);
      jobIds.push(response.headers.get('x-job-id') as string);
    }

    const past = await keyed(replica, alice, 'keyed-past', 'key-past');
    await expectBoundReached(past);
    const retryAfter = Number(past.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(23 * 3_600);
    expect(retryAfter).toBeLessThanOrEqual(26 * 3_600);

    // A repeat of a key that has its record still replays its job.
    const repeat = await keyed(api, alice, 'keyed-0', 'key-0');
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('x-job-id')).toBe(jobIds[0]);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    // A request without a key makes no record: served.
    const unkeyed = await api.post(cancelPaths.cancel, signedBody(alice, { externalId: 'unkeyed' }));
    expect(unkeyed.status).toBe(200);
    // Another merchant has a bound of its own.
    const other = await keyed(api, bob, 'bob-0', 'key-past');
    expect(other.status).toBe(200);
    expect(other.headers.get('idempotent-replayed')).toBeNull();

    // The count is one small hash per merchant, which expires with the records it counts.
    const countKey = merchantRecordCountKey(api.deps.shards.merchantPrefix(alice.id), alice.id, 'i');
    const ttl = await api.deps.redis.pttl(countKey);
    expect(ttl).toBeGreaterThan(24 * 3_600_000);
    expect(ttl).toBeLessThanOrEqual(27 * 3_600_000);
  });

  it('past SIGNATURE_REPLAY_RECORDS_PER_MERCHANT a new version-2 cancel is 429 errorCode 7; a resent one still replays', async () => {
    const carol = await createMerchant(env.db, { signatureVersion: 2 });
    const dave = await createMerchant(env.db, { signatureVersion: 2 });
    const first = v2Cancel(carol, 'v2-0');
    const firstAnswer = await first(api);
    expect(firstAnswer.status).toBe(200);
    expect((await v2Cancel(carol, 'v2-1')(replica)).status).toBe(200);

    const past = await v2Cancel(carol, 'v2-past')(api);
    await expectBoundReached(past);
    // Two signature windows (5 minutes each by default) at most.
    expect(Number(past.headers.get('retry-after'))).toBeLessThanOrEqual(11 * 60);

    const resent = await first(replica);
    expect(resent.status).toBe(200);
    expect(resent.headers.get('x-job-id')).toBe(firstAnswer.headers.get('x-job-id'));
    expect(resent.headers.get('idempotent-replayed')).toBe('true');
    expect((await v2Cancel(dave, 'v2-0')(api)).status).toBe(200);
  });

  it('a refused merchant is let in again once its oldest records have expired, not before', async () => {
    const erin = await createMerchant(env.db);
    const store = {
      redis: api.deps.redis,
      layout: api.deps.shards,
      timeoutMs: 1_000,
      recordsPerMerchant: { idempotencyKeys: 2, signatureReplays: 0 },
    };
    const claim = (key: string) =>
      claimIdempotencyKey(store, erin.id, key, requestFingerprint('cancel', { externalId: key }));
    const dayMs = 24 * 3_600_000;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      await claim('early-1');
      vi.advanceTimersByTime(3 * 3_600_000);
      await claim('late-1');
      await expect(claim('refused')).rejects.toMatchObject({ errorName: 'RATE_LIMITED' });
      // A day and an hour after the first record: it has expired and left the count; the later one has not.
      vi.advanceTimersByTime(dayMs - 3 * 3_600_000 + 2 * 3_600_000);
      await claim('after-early-expired');
      await expect(claim('refused-again')).rejects.toMatchObject({ errorName: 'RATE_LIMITED' });
    } finally {
      vi.useRealTimers();
    }
  });
});
