import { beforeAll, describe, expect, it } from 'vitest';
import {
  cancelPaths,
  fetchJobStatus,
  type JobStatusBody,
  requestCancellation,
  waitForJob,
} from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker } from '../helpers/worker.js';

// No worker runs here until a test starts one: jobs stay waiting, so sharing can be observed.
const { env, api } = useTestContext({ settings: { BULK_MAX_ITEMS: '20' }, api: true });
let merchant: MerchantFixture;
let other: MerchantFixture;

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
});

async function waitingJobs(): Promise<number> {
  const { queues } = api.deps.producer.queues.forShard(null);
  return (await queues.cancel.getWaitingCount()) + (await queues['bulk-cancel'].getWaitingCount());
}

async function expectRejected(path: string, fields: Record<string, unknown>, message: RegExp) {
  const before = await waitingJobs();
  const response = await api.post(path, signedBody(merchant, fields));
  expect(response.status).toBe(400);
  const body = (await response.json()) as { errorCode: number; errorMessage: string };
  expect(body.errorCode).toBe(1);
  expect(body.errorMessage).toMatch(message);
  expect(response.headers.get('x-job-id')).toBeNull();
  expect(await waitingJobs()).toBe(before);
}

describe('cancel request validation: nothing is queued for a bad request', () => {
  it('cancel needs exactly one of id or externalId', async () => {
    await expectRejected(cancelPaths.cancel, {}, /exactly one of id or externalId/);
    await expectRejected(cancelPaths.cancel, { id: uuid(1), externalId: 'x' }, /exactly one/);
    await expectRejected(cancelPaths.cancel, { id: 'not-a-uuid' }, /^id:/);
    await expectRejected(cancelPaths.cancel, { externalId: '' }, /^externalId:/);
    await expectRejected(cancelPaths.cancel, { externalId: 'x'.repeat(256) }, /^externalId:/);
    // Postgres text cannot hold NUL: refused here rather than failing in the worker.
    await expectRejected(cancelPaths.cancel, { externalId: 'a\u0000b' }, /NUL/);
    await expectRejected(cancelPaths.bulkCancelByQuery, { playerIds: ['ok', 'a\u0000'] }, /^playerIds\[1\]: .*NUL/);
  });

  it('a null id with an externalId is accepted (null counts as absent)', async () => {
    const jobId = await requestCancellation(api, merchant, 'cancel', { id: null, externalId: 'null-is-absent' });
    expect(jobId).toBeTruthy();
  });

  it('bulkCancel: empty, too long, or one malformed entry rejects the whole request', async () => {
    await expectRejected(cancelPaths.bulkCancel, {}, /at least one entry/);
    await expectRejected(cancelPaths.bulkCancel, { ids: null, externalIds: [] }, /at least one entry/);
    await expectRejected(
      cancelPaths.bulkCancel,
      { ids: Array.from({ length: 15 }, (_, i) => uuid(i)), externalIds: Array.from({ length: 6 }, (_, i) => `e${i}`) },
      /at most 20 entries, got 21/,
    );
    await expectRejected(cancelPaths.bulkCancel, { ids: [uuid(1), 'bad', uuid(2)] }, /^ids\[1\]:/);
    await expectRejected(cancelPaths.bulkCancel, { externalIds: ['ok', ''] }, /^externalIds\[1\]:/);
    await expectRejected(cancelPaths.bulkCancel, { ids: 'not-a-list' }, /^ids:/);
  });

  it('bulkCancelByQuery: playerIds required, 1 to the limit, configuration id a UUID', async () => {
    await expectRejected(cancelPaths.bulkCancelByQuery, {}, /^playerIds:/);
    await expectRejected(cancelPaths.bulkCancelByQuery, { playerIds: [] }, /at least one entry/);
    await expectRejected(
      cancelPaths.bulkCancelByQuery,
      { playerIds: Array.from({ length: 21 }, (_, i) => `p${i}`) },
      /at most 20/,
    );
    await expectRejected(cancelPaths.bulkCancelByQuery, { playerIds: ['ok', ''] }, /^playerIds\[1\]:/);
    await expectRejected(
      cancelPaths.bulkCancelByQuery,
      { playerIds: ['p'], rewardConfigurationId: 'x' },
      /^rewardConfigurationId:/,
    );
  });
});

describe('identical requests share a waiting job', () => {
  it('same merchant, operation and identifiers in any order share one job id', async () => {
    const first = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: [uuid(7), uuid(8)],
      externalIds: ['a'],
    });
    const second = await requestCancellation(api, merchant, 'bulkCancel', {
      externalIds: ['a', 'a'],
      ids: [uuid(8), uuid(7)],
    });
    expect(second).toBe(first);
    const single = await requestCancellation(api, merchant, 'cancel', { externalId: 'share-me' });
    expect(await requestCancellation(api, merchant, 'cancel', { externalId: 'share-me' })).toBe(single);
    const query = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['b', 'a'] });
    expect(await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['a', 'b', 'a'] })).toBe(query);
  });

  it('different identifiers, operation, filter or merchant get jobs of their own', async () => {
    const base = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['x1'] });
    const ids = new Set([
      base,
      await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['x1', 'x2'] }),
      await requestCancellation(api, merchant, 'bulkCancelByQuery', {
        playerIds: ['x1'],
        rewardConfigurationId: uuid(3),
      }),
      await requestCancellation(api, other, 'bulkCancelByQuery', { playerIds: ['x1'] }),
      await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['x1'] }),
    ]);
    expect(ids.size).toBe(5);
  });

  it('once the shared job has run, the same request makes a new job', async () => {
    const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
    const [reward] = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: [{ playerId: 'later', externalId: 'run-then-again' }],
    });
    const first = await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['run-then-again'] });
    const worker = await startTestWorker(env);
    try {
      expect((await waitForJob(api, merchant, first)).result?.cancelled).toBe(1);
      const again = await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['run-then-again'] });
      expect(again).not.toBe(first);
      expect((await waitForJob(api, merchant, again)).result).toMatchObject({ cancelled: 0, alreadyCancelled: 1 });
    } finally {
      await worker.close();
    }
    const row = await env.db
      .selectFrom('rewards')
      .selectAll()
      .where('id', '=', reward?.id as string)
      .executeTakeFirstOrThrow();
    expect(row.cancellation_job_id).toBe(first);
  });
});

describe('job status', () => {
  it("answers 404 for another merchant's job and for an unknown id", async () => {
    const jobId = await requestCancellation(api, merchant, 'cancel', { externalId: 'status-owner' });
    const mine = await fetchJobStatus(api, merchant, jobId);
    expect(mine.status).toBe(200);
    expect(await mine.json()).toMatchObject({ jobId, operation: 'cancel', state: 'queued', result: null });
    for (const [who, id] of [
      [other, jobId],
      [merchant, uuid(99)],
      [merchant, 'not-a-job-id'],
    ] as const) {
      const response = await fetchJobStatus(api, who, id);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ errorCode: 10, errorMessage: 'Job not found' });
    }
  });

  it('keeps answering from the audit table after Redis has forgotten the job', async () => {
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['forgotten-1'] });
    const worker = await startTestWorker(env);
    try {
      await waitForJob(api, merchant, jobId);
    } finally {
      await worker.close();
    }
    await api.deps.producer.queues.forShard(null).queues['bulk-cancel'].remove(jobId);
    const response = await fetchJobStatus(api, merchant, jobId);
    expect(response.status).toBe(200);
    const status = (await response.json()) as JobStatusBody;
    expect(status).toMatchObject({
      jobId,
      operation: 'bulkCancel',
      state: 'completed',
      progress: 100,
      result: { requested: 1, cancelled: 0, alreadyCancelled: 0, notCancellable: 0, notFound: 1 },
      error: null,
    });
    expect(status.finishedAt).toBeGreaterThanOrEqual(status.startedAt ?? Number.POSITIVE_INFINITY);
  });
});

describe('failed jobs', () => {
  it('a malformed payload fails at once, without retries, and stays visible with its error', async () => {
    const jobId = '00000000-0000-4000-8000-0000000fa11d';
    await api.deps.producer.queues
      .forShard(null)
      .queues['bulk-cancel'].add(
        'bulkCancel',
        { merchantId: merchant.id, acceptedAt: Date.now(), ids: ['not-a-uuid'], externalIds: [] },
        { jobId, attempts: 5 },
      );
    const worker = await startTestWorker(env);
    try {
      const status = await waitForJob(api, merchant, jobId);
      expect(status.state).toBe('failed');
      // The merchant gets a generic sentence; the detail is for the logs and the admin view.
      expect(status.error).toBe('request could not be applied');
      const admin = await api.get(`/admin/v1/jobs/${jobId}`, { authorization: `Bearer ${env.config.ADMIN_TOKEN}` });
      expect(((await admin.json()) as { error: string }).error).toMatch(/malformed job payload/);
      const job = await api.deps.producer.queues.forShard(null).queues['bulk-cancel'].getJob(jobId);
      expect(job?.attemptsMade).toBe(1);
    } finally {
      await worker.close();
    }
    const audit = await env.db.selectFrom('cancellation_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
    expect(audit).toMatchObject({ state: 'failed', merchant_id: merchant.id, operation: 'bulkCancel' });
    expect(audit?.error).toMatch(/malformed job payload/);
  });
});
