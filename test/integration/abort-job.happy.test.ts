import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchIdOf } from '../../src/shared/cancellations/member-ids.js';
import { requestAbort } from '../../src/shared/jobs/job-abort.js';
import { deduplicationKey } from '../../src/shared/jobs/job-catalogue.js';
import { cancelSingleRewards } from '../../src/worker/cancellations/reward-cancellations.repository.js';
import { cancelPaths, fetchJobStatus, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { lockRewards } from '../helpers/row-locks.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually, startTestWorker } from '../helpers/worker.js';

/**
 * Aborting a job (POST /api/v1/integration/jobs/cancel): a queued job leaves its queue and is
 * cancelled at once; a running one stops before its next batch, also in every part of a split job;
 * what was applied stays and is counted; finished jobs are a conflict; other merchants' jobs are unknown.
 */

const abortPath = '/api/v1/integration/jobs/cancel';

// Batches of 10 rewards, one player (10 rewards) per slice; above 50 players a job is split into parts of 20.
// One bulk job at a time, so that a held part keeps the parts behind it waiting.
const { env, api } = useTestContext({
  settings: {
    CANCEL_BATCH_SIZE: '10',
    FANOUT_THRESHOLD: '50',
    FANOUT_CHUNK_SIZE: '20',
    WORKER_BULK_CONCURRENCY: '1',
  },
  api: true,
});
let merchant: MerchantFixture;
let other: MerchantFixture;

beforeAll(async () => {
  [merchant, other] = await Promise.all([createMerchant(env.db), createMerchant(env.db)]);
});

async function rewardsOf(prefix: string, players: number, perPlayer = 10) {
  const configuration = await createConfiguration(env.db, {
    merchantId: merchant.id,
    externalId: `${prefix}-cfg`,
    startDate: Date.now(),
  });
  const playerIds = Array.from({ length: players }, (_, i) => `${prefix}-p${String(i).padStart(3, '0')}`);
  const rewards = await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: playerIds.flatMap((playerId) => Array.from({ length: perPlayer }, () => ({ playerId }))),
  });
  return { playerIds, rewards };
}

function abort(jobId: string, who: MerchantFixture = merchant) {
  return api.post(abortPath, signedBody(who, { jobId }));
}

async function carryingJob(jobId: string): Promise<number> {
  const result = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM rewards WHERE cancellation_job_id = ${jobId}::uuid AND status = 'CANCELLED'
  `.execute(env.db);
  return result.rows[0]?.count ?? 0;
}

async function activeOf(playerIds: string[]): Promise<number> {
  const result = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM rewards
    WHERE merchant_id = ${merchant.id} AND player_id = ANY(${playerIds}::text[]) AND status = 'ACTIVE'
  `.execute(env.db);
  return result.rows[0]?.count ?? 0;
}

describe('aborting a queued job (no worker runs)', () => {
  it('takes a bulk job out of its queue: cancelled at once, nothing applied, and a second abort is a conflict', async () => {
    const { playerIds } = await rewardsOf('queued', 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const response = await abort(jobId);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ jobId, operation: 'bulkCancelByQuery', state: 'cancelled' });
    expect(await api.deps.producer.queues.forShard(null).queues['bulk-cancel'].getJob(jobId)).toBeUndefined();
    const status = (await (await fetchJobStatus(api, merchant, jobId)).json()) as { state: string };
    expect(status.state).toBe('cancelled');

    const again = await abort(jobId);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ errorCode: 13 });
    expect(await activeOf(playerIds)).toBe(30);
  });

  it("answers 404 for another merchant's job and for an unknown one, and changes nothing", async () => {
    const { playerIds } = await rewardsOf('foreign', 1);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const foreign = await abort(jobId, other);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ errorCode: 10 });
    expect((await abort('00000000-0000-4000-8000-00000000beef')).status).toBe(404);
    const status = (await (await fetchJobStatus(api, merchant, jobId)).json()) as { state: string };
    expect(status.state).toBe('queued');
  });

  it('refuses a request without a jobId with 400', async () => {
    const response = await api.post(abortPath, signedBody(merchant, {}));
    expect(response.status).toBe(400);
  });
});

/** Two single cancels stored in one batch, as the API stores requests that arrive together. */
async function twoSinglesInOneBatch(prefix: string) {
  const { rewards } = await rewardsOf(prefix, 1, 2);
  const stored = await Promise.all(
    rewards.map((reward) =>
      api.deps.producer.enqueue(
        'cancel',
        { merchantId: merchant.id, acceptedAt: Date.now(), id: reward.id },
        deduplicationKey(merchant.id, 'cancel', { id: reward.id }),
      ),
    ),
  );
  const [first, second] = stored.map(({ jobId }) => jobId) as [string, string];
  expect(batchIdOf(first)).toBe(batchIdOf(second));
  expect(first).not.toBe(second);
  return { first, second, rewards };
}

async function rewardStatus(rewardId: string | undefined): Promise<string | undefined> {
  const row = await env.db
    .selectFrom('rewards')
    .select('status')
    .where('id', '=', rewardId as string)
    .executeTakeFirst();
  return row?.status;
}

describe('aborting a single cancel stored in a batch with others', { timeout: 60_000 }, () => {
  it('is cancelled at once while the batch waits; the worker skips it and runs the rest', async () => {
    const { first, second, rewards } = await twoSinglesInOneBatch('batch-waiting');
    const response = await abort(first);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ jobId: first, operation: 'cancel', state: 'cancelled' });

    const worker = await startTestWorker(env);
    try {
      expect(await waitForJob(api, merchant, second)).toMatchObject({ state: 'completed', result: { cancelled: 1 } });
      expect(await waitForJob(api, merchant, first)).toMatchObject({ state: 'cancelled', result: null });
      expect(await rewardStatus(rewards[0]?.id)).toBe('ACTIVE');
      expect(await rewardStatus(rewards[1]?.id)).toBe('CANCELLED');
      expect((await abort(first)).status).toBe(409);
    } finally {
      await worker.close();
    }
  });

  it('aborted once its batch was taken (the API could not withdraw it), the worker records it cancelled, nothing applied', async () => {
    const { first, second, rewards } = await twoSinglesInOneBatch('batch-taken');
    // The mark alone, as the abort route leaves it when the batch had already started.
    await requestAbort(api.deps.redis, api.deps.shards, first);
    const worker = await startTestWorker(env);
    try {
      expect(await waitForJob(api, merchant, second)).toMatchObject({ state: 'completed' });
      expect(await waitForJob(api, merchant, first)).toMatchObject({ state: 'cancelled', result: null });
      expect(await rewardStatus(rewards[0]?.id)).toBe('ACTIVE');
      const audit = await env.db.selectFrom('cancellation_jobs').selectAll().where('id', '=', first).executeTakeFirst();
      expect(audit).toMatchObject({ state: 'cancelled', operation: 'cancel', merchant_id: merchant.id });
    } finally {
      await worker.close();
    }
  });
});

describe('a single cancel aborted while its batch is run again', { timeout: 60_000 }, () => {
  it('keeps what an earlier run of the batch committed: completed, counted once', async () => {
    const { first, second, rewards } = await twoSinglesInOneBatch('batch-rerun');
    // As if the batch had run once and committed the first request before its worker died: the batch has
    // started once, the reward carries the request's id, and the abort came after.
    const queue = api.deps.producer.queues.forShard(null).queues.cancel;
    await api.deps.redis.hset(queue.toKey(batchIdOf(first)), 'ats', '1');
    const at = new Date();
    await cancelSingleRewards(env.db, [
      { jobId: first, merchantId: merchant.id, rewardId: rewards[0]?.id, createdAt: at, startedAt: at },
    ]);
    await requestAbort(api.deps.redis, api.deps.shards, first);

    const worker = await startTestWorker(env);
    try {
      expect(await waitForJob(api, merchant, second)).toMatchObject({ state: 'completed' });
      expect(await waitForJob(api, merchant, first)).toMatchObject({ state: 'completed', result: { cancelled: 1 } });
      const audit = await env.db.selectFrom('cancellation_jobs').selectAll().where('id', '=', first).executeTakeFirst();
      expect(audit).toMatchObject({ state: 'completed', outcome: 'cancelled' });
      expect(await rewardStatus(rewards[0]?.id)).toBe('CANCELLED');
    } finally {
      await worker.close();
    }
  });
});

describe('aborting a running job', { timeout: 60_000 }, () => {
  it('stops after the batch in flight; what was applied stays and is counted', async () => {
    const { playerIds, rewards } = await rewardsOf('running', 10);
    // The job blocks on the 6th player's rewards (sorted order), after 5 players (50 rewards) are done.
    const held = await lockRewards(
      env.databaseUrl,
      rewards.filter((reward) => reward.playerId === playerIds[5]).map((reward) => reward.id),
    );
    const worker = await startTestWorker(env);
    try {
      const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
      await eventually(async () => ((await carryingJob(jobId)) === 50 ? true : undefined), { what: '5 players done' });

      const response = await abort(jobId);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ state: 'cancelling' });
      await held.release();

      const status = await waitForJob(api, merchant, jobId);
      expect(status.state).toBe('cancelled');
      // The batch in flight (the 6th player) committed; nothing after it ran.
      expect(await carryingJob(jobId)).toBe(60);
      expect(status.result).toEqual({ players: 10, cancelled: 60 });
      expect(await activeOf(playerIds.slice(6))).toBe(40);
      const audit = await env.db.selectFrom('cancellation_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
      expect(audit).toMatchObject({ state: 'cancelled', cancelled: 60 });
      expect((await abort(jobId)).status).toBe(409);
    } finally {
      await held.release();
      await worker.close();
    }
  });

  it('is honoured by every part of a split job', async () => {
    const { playerIds, rewards } = await rewardsOf('split', 60);
    // Part 0 (players 0–19) blocks on player 3; parts 1 and 2 wait behind it (one bulk job at a time).
    const held = await lockRewards(
      env.databaseUrl,
      rewards.filter((reward) => reward.playerId === playerIds[3]).map((reward) => reward.id),
    );
    const worker = await startTestWorker(env);
    try {
      const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
      await eventually(async () => ((await carryingJob(jobId)) === 30 ? true : undefined), { what: '3 players done' });
      expect((await abort(jobId)).status).toBe(200);
      await held.release();

      const status = await waitForJob(api, merchant, jobId);
      expect(status.state).toBe('cancelled');
      expect(await carryingJob(jobId)).toBe(40);
      expect(status.result).toEqual({ players: 60, cancelled: 40 });
      expect(await activeOf(playerIds.slice(4))).toBe(560);
    } finally {
      await held.release();
      await worker.close();
    }
  });
});

describe('the job status document', () => {
  it('lists the abort route and the new states', async () => {
    const document = (await (await api.get('/openapi.json')).json()) as {
      paths: Record<string, unknown>;
      components: { schemas: { JobStatus: { properties: { state: { enum: string[] } } } } };
    };
    expect(document.paths[abortPath]).toBeDefined();
    expect(document.components.schemas.JobStatus.properties.state.enum).toEqual(
      expect.arrayContaining(['cancelling', 'cancelled']),
    );
    expect(cancelPaths.jobStatus in document.paths).toBe(true);
  });
});
