import { describe, expect, it } from 'vitest';
import { startTestApi } from '../helpers/api.js';
import { cancelPaths, requestCancellation } from '../helpers/cancellation.js';
import { createTestEnvironment } from '../helpers/environment.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Per-merchant cap of bulk jobs queued or running (maxQueuedJobs), and the operators' per-queue cap of
 * waiting jobs. No worker runs here, so every accepted job stays queued.
 */

const { env, api } = useTestContext({ settings: { MAX_QUEUED_JOBS: '3' }, api: true });

function bulkCancel(merchant: MerchantFixture, externalIds: string[]) {
  return api.post(cancelPaths.bulkCancel, signedBody(merchant, { externalIds }));
}

describe('maxQueuedJobs', () => {
  it('refuses the bulk job past the default cap with 429 errorCode 7 and Retry-After, and nothing is queued', async () => {
    const merchant = await createMerchant(env.db);
    for (let job = 0; job < 3; job++)
      await requestCancellation(api, merchant, 'bulkCancel', { externalIds: [`a-${job}`] });
    const before = await api.deps.producer.queues
      .forShard(null)
      .queues['bulk-cancel'].getJobCountByTypes('prioritized', 'wait');
    const refused = await bulkCancel(merchant, ['a-over']);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ errorCode: 7 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-job-id')).toBeNull();
    expect(
      await api.deps.producer.queues.forShard(null).queues['bulk-cancel'].getJobCountByTypes('prioritized', 'wait'),
    ).toBe(before);
  });

  it('lets a request that shares an identical waiting job through at the cap: it adds no job', async () => {
    const merchant = await createMerchant(env.db);
    const jobIds = [];
    for (let job = 0; job < 3; job++) {
      jobIds.push(await requestCancellation(api, merchant, 'bulkCancel', { externalIds: [`b-${job}`] }));
    }
    const again = await bulkCancel(merchant, ['b-1']);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-job-id')).toBe(jobIds[1]);
  });

  it("is each merchant's own: one merchant at its cap does not refuse another", async () => {
    const full = await createMerchant(env.db);
    for (let job = 0; job < 3; job++) await requestCancellation(api, full, 'bulkCancel', { externalIds: [`c-${job}`] });
    expect((await bulkCancel(full, ['c-over'])).status).toBe(429);
    const other = await createMerchant(env.db);
    expect((await bulkCancel(other, ['c-0'])).status).toBe(200);
  });

  it("follows the merchant's own setting over the default, and does not cap single cancels", async () => {
    const merchant = await createMerchant(env.db);
    await env.db.updateTable('merchants').set({ max_queued_jobs: 1 }).where('id', '=', merchant.id).execute();
    await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['d-1'] });
    expect((await bulkCancel(merchant, ['d-over'])).status).toBe(429);
    for (let single = 0; single < 5; single++) {
      await requestCancellation(api, merchant, 'cancel', { externalId: `d-single-${single}` });
    }
  });

  it('frees a place once a job is gone, even when no worker said so (a stale place is pruned)', async () => {
    const merchant = await createMerchant(env.db);
    const jobIds = [];
    for (let job = 0; job < 3; job++) {
      jobIds.push(await requestCancellation(api, merchant, 'bulkCancel', { externalIds: [`e-${job}`] }));
    }
    expect((await bulkCancel(merchant, ['e-over'])).status).toBe(429);
    const gone = await api.deps.producer.queues.forShard(null).queues['bulk-cancel'].getJob(jobIds[0] as string);
    await gone?.remove();
    expect((await bulkCancel(merchant, ['e-over'])).status).toBe(200);
  });
});

describe('QUEUE_MAX_WAITING, counted per queue', () => {
  it('refuses with 503 past the cap in that queue only: a full bulk queue does not refuse single cancels', async () => {
    const capped = await createTestEnvironment({ QUEUE_MAX_WAITING: '2', MAX_QUEUED_JOBS: '100' });
    const cappedApi = await startTestApi(capped);
    try {
      const merchant = await createMerchant(capped.db);
      for (let job = 0; job < 2; job++) {
        await requestCancellation(cappedApi, merchant, 'bulkCancel', { externalIds: [`f-${job}`] });
      }
      // The count is refreshed at most once a second per queue and process.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const refused = await cappedApi.post(cancelPaths.bulkCancel, signedBody(merchant, { externalIds: ['f-over'] }));
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ errorCode: 11 });
      await requestCancellation(cappedApi, merchant, 'cancel', { externalId: 'f-single' });
    } finally {
      await cappedApi.close();
      await capped.close();
    }
  });
});
