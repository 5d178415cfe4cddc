import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { listDeferredSlices } from '../../src/shared/jobs/job-rewards.repository.js';
import { LISTED_BEFORE_COMPLETION } from '../../src/worker/jobs/job-end/listing.js';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * Who lists a by-query job's rewards (docs/design.md §6): the worker, at the job's end; the API only
 * reads, and answers 409 with Retry-After while some of a job's rewards are still to be listed.
 */

const path = '/api/v1/integration/jobs/rewards';

const { env, api } = useTestContext({ api: true, worker: true });
let merchant: MerchantFixture;
let configurationId: string;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
});

/** `perPlayer` rewards for each of `players` players, in one statement. */
async function rewardsOf(prefix: string, players: number, perPlayer: number): Promise<string[]> {
  await sql`
    INSERT INTO rewards (merchant_id, reward_configuration_id, player_id)
    SELECT ${merchant.id}::uuid, ${configurationId}::uuid, ${prefix} || '-' || p
    FROM generate_series(1, ${players}) p, generate_series(1, ${perPlayer})
  `.execute(env.db);
  return Array.from({ length: players }, (_, index) => `${prefix}-${index + 1}`);
}

const page = (jobId: string, extra: Record<string, unknown> = {}) =>
  api.post(path, signedBody(merchant, { jobId, ...extra }));

async function carrying(jobId: string): Promise<string[]> {
  const rows = await env.db
    .selectFrom('rewards')
    .select('id')
    .where('cancellation_job_id', '=', jobId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

describe("a by-query job's rewards, listed by the worker", () => {
  it('a page of a job with rewards still to list answers 409 errorCode 13 with Retry-After, and nothing is listed by it', async () => {
    const players = await rewardsOf('pending', 2, 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: players });
    await waitForJob(api, merchant, jobId);
    // A small job was listed before it was reported completed.
    expect((await page(jobId)).status).toBe(200);

    // A slice still to list (as a large job leaves one until the worker's lister reaches it).
    await sql`
      INSERT INTO job_cancel_slices (job_id, merchant_id, cancelled_at, player_ids)
      VALUES (${jobId}::uuid, ${merchant.id}::uuid, now(), ARRAY['nobody'])
    `.execute(env.db);
    for (let i = 0; i < 2; i++) {
      const response = await page(jobId);
      expect(response.status).toBe(409);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.json()).toMatchObject({ errorCode: 13 });
    }
    // The API read and wrote nothing: the slice is still there until a worker lists it.
    const left = await env.db.selectFrom('job_cancel_slices').select('id').where('job_id', '=', jobId).execute();
    expect(left).toHaveLength(1);

    await listDeferredSlices(env.db, { merchantId: merchant.id, jobId }, { skipLocked: true });
    const response = await page(jobId);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { rewards: unknown[] }).rewards).toHaveLength(6);
  });

  it(`a job of more than ${LISTED_BEFORE_COMPLETION} rewards is listed by the worker right after it completes`, async () => {
    const players = await rewardsOf('large', 105, 100);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: players });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({ players: 105, cancelled: 10_500 });

    // 409 until the lister has listed it, then every reward, once, in id order.
    const first = await eventually(
      async () => {
        const response = await page(jobId, { limit: 10_000 });
        if (response.status === 409) return undefined;
        expect(response.status).toBe(200);
        return (await response.json()) as { rewards: Array<{ id: string }>; next: string | null };
      },
      { what: 'the job listed', timeoutMs: 20_000 },
    );
    const second = (await (await page(jobId, { limit: 10_000, after: first.next })).json()) as {
      rewards: Array<{ id: string }>;
      next: string | null;
    };
    expect(second.next).toBeNull();
    expect([...first.rewards, ...second.rewards].map((reward) => reward.id)).toEqual(await carrying(jobId));
  });
});
