import { beforeAll, describe, expect, it } from 'vitest';
import { claimIdempotencyKey, requestFingerprint } from '../../src/api/cancellations/idempotency.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

// No worker: jobs stay waiting. At most one waiting job per queue, so a second bulk job is refused (503).
const { env, api } = useTestContext({ settings: { QUEUE_MAX_WAITING: '1' }, api: true });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

async function send(path: string, fields: Record<string, unknown>, key: string, on: TestApi = api) {
  return on.post(path, signedBody(merchant, fields), { 'Idempotency-Key': key });
}

async function errorOf(response: Response) {
  return { status: response.status, ...((await response.json()) as { errorCode: number; errorMessage: string }) };
}

describe('Idempotency-Key errors', () => {
  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'with space'],
    ['a control character', 'tab\there'],
  ])('refuses a key with %s (400) and queues nothing', async (_, key) => {
    const response = await send(cancelPaths.cancel, { externalId: 'bad-key' }, key);
    expect(await errorOf(response)).toMatchObject({ status: 400, errorCode: 1, errorMessage: /idempotency-key/ });
    expect(response.headers.get('x-job-id')).toBeNull();
  });

  it('accepts 255 visible ASCII characters', async () => {
    const key = `${'!~'.repeat(127)}x`;
    const response = await send(cancelPaths.cancel, { externalId: 'long-key' }, key);
    expect(response.status).toBe(200);
  });

  it('the same key with other fields is 422 errorCode 12, on the same or another cancel route', async () => {
    const first = await send(cancelPaths.cancel, { externalId: 'conflict-a' }, 'key-conflict');
    expect(first.status).toBe(200);
    const other = await send(cancelPaths.cancel, { externalId: 'conflict-b' }, 'key-conflict');
    expect(await errorOf(other)).toMatchObject({ status: 422, errorCode: 12 });
    expect(other.headers.get('x-job-id')).toBeNull();
    const otherRoute = await send(cancelPaths.bulkCancel, { externalIds: ['conflict-a'] }, 'key-conflict');
    expect(await errorOf(otherRoute)).toMatchObject({ status: 422, errorCode: 12 });
  });

  it('while the first request with the key is still storing its job: 409 errorCode 13 with Retry-After 1', async () => {
    const fields = { externalId: 'in-flight' };
    // Another replica has taken the key and not yet stored its job.
    const store = {
      redis: api.deps.redis,
      layout: api.deps.shards,
      timeoutMs: 1_000,
      recordsPerMerchant: { idempotencyKeys: 0, signatureReplays: 0 },
    };
    const held = await claimIdempotencyKey(store, merchant.id, 'key-in-flight', requestFingerprint('cancel', fields));
    const response = await send(cancelPaths.cancel, fields, 'key-in-flight');
    expect(await errorOf(response)).toMatchObject({ status: 409, errorCode: 13 });
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('x-job-id')).toBeNull();

    if (held.replayedJobId !== undefined) throw new Error('expected to hold the key');
    await held.complete('11111111-1111-4111-8111-111111111111');
    const after = await send(cancelPaths.cancel, fields, 'key-in-flight');
    expect(after.status).toBe(200);
    expect(after.headers.get('x-job-id')).toBe('11111111-1111-4111-8111-111111111111');
  });

  it('a request whose job could not be stored (503) frees its key: the retry proceeds', async () => {
    const occupying = await api.post(cancelPaths.bulkCancelByQuery, signedBody(merchant, { playerIds: ['occupant'] }));
    expect(occupying.status).toBe(200);
    // A fresh replica counts the waiting jobs at once (each process re-counts at most once a second).
    const fresh = await startTestApi(env);
    try {
      const fields = { playerIds: ['refused-player'] };
      const refused = await send(cancelPaths.bulkCancelByQuery, fields, 'key-refused', fresh);
      expect(await errorOf(refused)).toMatchObject({ status: 503, errorCode: 11 });

      // Room again: the retry with the same key is a first request, not a 409 and not a replay.
      await api.deps.producer.queues.forShard(null).queues['bulk-cancel'].obliterate({ force: true });
      const retried = await eventually(
        async () => {
          const answer = await send(cancelPaths.bulkCancelByQuery, fields, 'key-refused', fresh);
          return answer.status === 503 ? undefined : answer;
        },
        { timeoutMs: 5_000, what: 'the queue to take the retry' },
      );
      expect(retried.status).toBe(200);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      expect(retried.headers.get('x-job-id')).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await fresh.close();
    }
  });
});
