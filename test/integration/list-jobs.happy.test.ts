import { beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/** POST /api/v1/integration/jobs/list, keyset pages of a merchant's jobs, newest first. */

const PATH = '/api/v1/integration/jobs/list';

const { env, api } = useTestContext({ api: true, worker: true });
let merchant: MerchantFixture;
let other: MerchantFixture;
/** The merchant's job ids, oldest first. */
const jobIds: string[] = [];

interface JobsPage {
  jobs: Array<{ jobId: string; operation: string; state: string; result: Record<string, number> | null }>;
  next: string | null;
}

async function page(owner: MerchantFixture, fields: Record<string, unknown>): Promise<JobsPage> {
  const response = await api.post(PATH, signedBody(owner, fields));
  expect(response.status).toBe(200);
  return (await response.json()) as JobsPage;
}

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
  const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
  await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: Array.from({ length: 5 }, (_, i) => ({ playerId: `list-player-${i}`, externalId: `list-${i}` })),
  });
  // One at a time, so that their creation order is their order.
  for (const [operation, fields] of [
    ['bulkCancel', { externalIds: ['list-0', 'list-1'] }],
    ['cancel', { externalId: 'list-2' }],
    ['bulkCancelByQuery', { playerIds: ['list-player-3'] }],
    ['bulkCancel', { externalIds: ['list-4', 'list-none'] }],
    ['cancel', { externalId: 'list-none' }],
  ] as const) {
    const jobId = await requestCancellation(api, merchant, operation, fields);
    await waitForJob(api, merchant, jobId);
    jobIds.push(jobId);
  }
  await waitForJob(api, other, await requestCancellation(api, other, 'cancel', { externalId: 'elsewhere' }));
});

describe('jobs/list', () => {
  it("lists only the merchant's own jobs, newest first, with their status and counts", async () => {
    const { jobs, next } = await page(merchant, {});
    expect(next).toBeNull();
    expect(jobs.map((job) => job.jobId)).toEqual([...jobIds].reverse());
    expect(jobs.every((job) => job.state === 'completed')).toBe(true);
    expect(jobs[1]).toMatchObject({
      operation: 'bulkCancel',
      result: { requested: 2, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 1 },
    });
    expect(jobs[2]).toMatchObject({ operation: 'bulkCancelByQuery', result: { players: 1, cancelled: 1 } });
  });

  it('walks keyset pages to the end without losing or repeating a job', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const current: JobsPage = await page(merchant, { limit: 2, ...(after ? { after } : {}) });
      seen.push(...current.jobs.map((job) => job.jobId));
      after = current.next;
      pages += 1;
    } while (after !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual([...jobIds].reverse());
  });

  it('filters by operation and by state', async () => {
    const cancels = await page(merchant, { operations: ['cancel'] });
    expect(cancels.jobs.map((job) => job.jobId)).toEqual([jobIds[4], jobIds[1]]);
    const bulk = await page(merchant, { operations: ['bulkCancel', 'bulkCancelByQuery'], states: ['completed'] });
    expect(bulk.jobs.map((job) => job.jobId)).toEqual([jobIds[3], jobIds[2], jobIds[0]]);
    expect((await page(merchant, { states: ['failed', 'cancelled'] })).jobs).toEqual([]);
  });

  it('leaves out jobs that finished more than the retention ago', async () => {
    await env.db
      .updateTable('cancellation_jobs')
      .set({ finished_at: new Date(Date.now() - env.config.RETENTION_MS - 60_000) })
      .where('id', '=', jobIds[0] as string)
      .execute();
    const { jobs } = await page(merchant, {});
    expect(jobs.map((job) => job.jobId)).toEqual([...jobIds].slice(1).reverse());
  });

  it('refuses an unknown state or operation, and a limit out of range, with 400', async () => {
    for (const fields of [{ states: ['queued'] }, { operations: ['refund'] }, { limit: 0 }, { limit: 1001 }]) {
      const response = await api.post(PATH, signedBody(merchant, fields));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ errorCode: 1 });
    }
  });
});
