import { beforeAll, describe, expect, it } from 'vitest';
import { JOB_OWNER_FIELD } from '../../src/api/jobs/job-owner.js';
import { batchIdOf } from '../../src/shared/cancellations/member-ids.js';
import { jobKey, queueNames } from '../../src/shared/redis/redis-keys.js';
import { fetchJobStatus, requestCancellation } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// Whose job it is comes from a field of its own in the job's hash, never from the serialised payload:
// a payload whose merchantId is not where a search would look for it cannot hand the job to another.

// No worker: jobs stay in Redis, where their status is read from.
const { env, api } = useTestContext({ api: true });
let owner: MerchantFixture;
let other: MerchantFixture;

beforeAll(async () => {
  owner = await createMerchant(env.db);
  other = await createMerchant(env.db);
});

describe('the owner of a job', () => {
  it('is stored in the bulk job hash, and is what status answers by, whatever the payload says', async () => {
    const jobId = await requestCancellation(api, owner, 'bulkCancelByQuery', { playerIds: ['owned'] });
    const key = jobKey(env.queuePrefix, queueNames.bulk, jobId);
    expect(await api.deps.redis.hget(key, JOB_OWNER_FIELD)).toBe(owner.id);

    // A payload naming the other merchant, serialised with merchantId last.
    await api.deps.redis.hset(key, 'data', JSON.stringify({ playerIds: ['owned'], merchantId: other.id }));
    expect((await fetchJobStatus(api, owner, jobId)).status).toBe(200);
    expect((await fetchJobStatus(api, other, jobId)).status).toBe(404);
    const abort = await api.post('/api/v1/integration/jobs/cancel', signedBody(other, { jobId }));
    expect(abort.status).toBe(404);
    expect((await fetchJobStatus(api, owner, jobId)).status).toBe(200);
  });

  it("is stored in a single cancel's batch hash: another merchant cannot read or abort the member", async () => {
    const jobId = await requestCancellation(api, owner, 'cancel', { externalId: 'owned-single' });
    const batch = jobKey(env.queuePrefix, queueNames.single, batchIdOf(jobId));
    expect(await api.deps.redis.hget(batch, JOB_OWNER_FIELD)).toBe(owner.id);
    expect((await fetchJobStatus(api, owner, jobId)).status).toBe(200);
    expect((await fetchJobStatus(api, other, jobId)).status).toBe(404);
  });
});
