import { beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

const path = '/api/v1/integration/jobs/unapplied';

const { env, api } = useTestContext({ api: true });
let alice: MerchantFixture;
let mallory: MerchantFixture;
let aliceJob: string;

beforeAll(async () => {
  alice = await createMerchant(env.db);
  mallory = await createMerchant(env.db);
  aliceJob = await requestCancellation(api, alice, 'bulkCancel', { externalIds: ['someone-else'] });
});

async function answer(merchant: MerchantFixture, fields: Record<string, unknown>) {
  const response = await api.post(path, signedBody(merchant, fields));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('jobs/unapplied request errors', () => {
  it.each([
    ['limit 0', { limit: 0 }, /^limit:/],
    ['limit above 10,000', { limit: 10_001 }, /^limit:/],
    ['an after that is a string', { after: 'abc' }, /^after:/],
    ['an after of an unknown kind', { after: { kind: 'playerId', identifier: 'x' } }, /^after\.kind:/],
    ['an after with an empty identifier', { after: { kind: 'id', identifier: '' } }, /^after\.identifier:/],
    ['no jobId', { jobId: undefined }, /^jobId:/],
  ])('%s is 400', async (_, fields, message) => {
    const { status, body } = await answer(alice, { jobId: aliceJob, ...fields });
    expect(status).toBe(400);
    expect(body).toMatchObject({ errorCode: 1, errorMessage: expect.stringMatching(message) });
  });

  it('accepts the bounds: limit 1 and 10,000, and an after past every entry', async () => {
    expect((await answer(alice, { jobId: aliceJob, limit: 1 })).status).toBe(200);
    expect((await answer(alice, { jobId: aliceJob, limit: 10_000 })).status).toBe(200);
    const past = await answer(alice, { jobId: aliceJob, after: { kind: 'id', identifier: 'zzz' } });
    expect(past).toEqual({ status: 200, body: { identifiers: [], next: null } });
  });
});

describe('jobs/unapplied security', () => {
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
