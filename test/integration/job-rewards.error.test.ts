import { beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

const path = '/api/v1/integration/jobs/rewards';

const { env, api } = useTestContext({ api: true });
let alice: MerchantFixture;
let mallory: MerchantFixture;
let aliceJob: string;

beforeAll(async () => {
  alice = await createMerchant(env.db);
  mallory = await createMerchant(env.db);
  aliceJob = await requestCancellation(api, alice, 'bulkCancelByQuery', { playerIds: ['someone'] });
});

async function answer(merchant: MerchantFixture, fields: Record<string, unknown>) {
  const response = await api.post(path, signedBody(merchant, fields));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('jobs/rewards request errors', () => {
  it.each([
    ['limit 0', { limit: 0 }, /^limit:/],
    ['limit above 10,000', { limit: 10_001 }, /^limit:/],
    ['a fractional limit', { limit: 1.5 }, /^limit:/],
    ['an after that is not a uuid', { after: 'abc' }, /^after:/],
    ['no jobId', { jobId: undefined }, /^jobId:/],
  ])('%s is 400', async (_, fields, message) => {
    const { status, body } = await answer(alice, { jobId: aliceJob, ...fields });
    expect(status).toBe(400);
    expect(body).toMatchObject({ errorCode: 1, errorMessage: expect.stringMatching(message) });
  });

  it('accepts the bounds: limit 1 and 10,000', async () => {
    expect((await answer(alice, { jobId: aliceJob, limit: 1 })).status).toBe(200);
    expect((await answer(alice, { jobId: aliceJob, limit: 10_000 })).status).toBe(200);
  });
});

describe('jobs/rewards security', () => {
  it("another merchant's job is 404, as an unknown one: nothing about it is told", async () => {
    const foreign = await answer(mallory, { jobId: aliceJob });
    const unknown = await answer(mallory, { jobId: '00000000-0000-4000-8000-000000000000' });
    const malformed = await answer(mallory, { jobId: 'not-a-job' });
    for (const refused of [foreign, unknown, malformed]) {
      expect(refused).toEqual({ status: 404, body: { errorCode: 10, errorMessage: 'Job not found' } });
    }
  });

  it('needs a valid signature', async () => {
    const response = await api.post(path, { ...signedBody(alice, { jobId: aliceJob }), hash: 'f'.repeat(64) });
    expect(response.status).toBe(401);
  });
});
