import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

const { env, api } = useTestContext({ api: true });
let replica: TestApi;
let alice: MerchantFixture;
let mallory: MerchantFixture;

beforeAll(async () => {
  replica = await startTestApi(env);
  alice = await createMerchant(env.db);
  mallory = await createMerchant(env.db);
});
afterAll(async () => {
  await replica?.close();
});

describe('Idempotency-Key is per merchant', () => {
  it("another merchant's request with the same key and fields gets its own job, never the first one's", async () => {
    const fields = { externalIds: ['shared-external-id'] };
    const first = await api.post(cancelPaths.bulkCancel, signedBody(alice, fields), { 'Idempotency-Key': 'k-1' });
    const aliceJob = first.headers.get('x-job-id');
    expect(first.status).toBe(200);

    const theirs = await replica.post(cancelPaths.bulkCancel, signedBody(mallory, fields), {
      'Idempotency-Key': 'k-1',
    });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.headers.get('x-job-id')).not.toBe(aliceJob);

    // Nor can another merchant learn of the key's use through a conflict.
    const probing = await api.post(cancelPaths.cancel, signedBody(mallory, { externalId: 'x' }), {
      'Idempotency-Key': 'k-2',
    });
    expect(probing.status).toBe(200);
    await api.post(cancelPaths.cancel, signedBody(alice, { externalId: 'y' }), { 'Idempotency-Key': 'k-2' });

    const aliceAgain = await api.post(cancelPaths.bulkCancel, signedBody(alice, fields), { 'Idempotency-Key': 'k-1' });
    expect(aliceAgain.headers.get('x-job-id')).toBe(aliceJob);
    expect(aliceAgain.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a replay needs a valid signature: a bad one is 401 and says nothing of the job', async () => {
    const fields = { externalId: 'signed-replay' };
    const first = await api.post(cancelPaths.cancel, signedBody(alice, fields), { 'Idempotency-Key': 'k-3' });
    expect(first.status).toBe(200);
    const forged = await api.post(
      cancelPaths.cancel,
      { ...signedBody(alice, fields), hash: '0'.repeat(64) },
      { 'Idempotency-Key': 'k-3' },
    );
    expect(forged.status).toBe(401);
    expect(forged.headers.get('x-job-id')).toBeNull();
    expect(forged.headers.get('idempotent-replayed')).toBeNull();
  });
});
