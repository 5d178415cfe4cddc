import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type ServiceProcess, startService } from '../helpers/processes.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * Fair turns between merchants (README, "Tenants"): merchant A queues 50 bulkCancelByQuery jobs of
 * 2,000 players each; merchant B's 10-id bulkCancel, sent after them, completes within 5 s of its
 * request, on one worker with default settings. In one first-in-first-out line B would wait for all
 * of A's work (24 s, measured 2026-11-22 before turns existed); here it waits for the job running and at most one
 * turn. A's jobs still all complete, each with its exact count.
 */

const A_JOBS = 50;
const PLAYERS_PER_JOB = 2_000;
const REWARDS_PER_PLAYER = 3;

const { env } = useTestContext();
let api: ServiceProcess;
let worker: ServiceProcess;
let merchantA: MerchantFixture;
let merchantB: MerchantFixture;

beforeAll(async () => {
  [merchantA, merchantB] = await Promise.all([createMerchant(env.db), createMerchant(env.db)]);
  const [configurationA, configurationB] = await Promise.all([
    createConfiguration(env.db, { merchantId: merchantA.id, externalId: 'fair-a', startDate: Date.now() }),
    createConfiguration(env.db, { merchantId: merchantB.id, externalId: 'fair-b', startDate: Date.now() }),
  ]);
  // 300,000 ACTIVE rewards of A, set-based: players a-00000 … a-99999, three rewards each.
  await sql`
    INSERT INTO rewards (merchant_id, reward_configuration_id, player_id, external_id, status)
    SELECT ${merchantA.id}::uuid, ${configurationA.id}::uuid, 'a-' || lpad(p::text, 5, '0'), 'a-' || p || '-' || n, 'ACTIVE'
    FROM generate_series(0, ${A_JOBS * PLAYERS_PER_JOB - 1}) AS p, generate_series(1, ${REWARDS_PER_PLAYER}) AS n
  `.execute(env.db);
  await sql`
    INSERT INTO rewards (merchant_id, reward_configuration_id, player_id, external_id, status)
    SELECT ${merchantB.id}::uuid, ${configurationB.id}::uuid, 'b-player', 'b-' || n, 'ACTIVE'
    FROM generate_series(1, 10) AS n
  `.execute(env.db);
  await sql`ANALYZE rewards`.execute(env.db);
  [api, worker] = await Promise.all([startService('api', env), startService('worker', env, { LOG_LEVEL: 'warn' })]);
}, 180_000);

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
});

async function post(merchant: MerchantFixture, path: string, fields: Record<string, unknown>): Promise<Response> {
  return fetch(`${api.baseUrl}/api/v1/integration/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signedBody(merchant, fields)),
  });
}

async function completed(merchant: MerchantFixture, jobId: string, timeoutMs: number) {
  return eventually(
    async () => {
      const response = await post(merchant, 'jobs/status', { jobId });
      const status = (await response.json()) as { state: string; result: Record<string, number> | null };
      if (status.state === 'failed') throw new Error(`job ${jobId} failed`);
      return status.state === 'completed' ? status.result : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `job ${jobId} to complete` },
  );
}

describe('fair turns between merchants', { timeout: 240_000 }, () => {
  it("a merchant's small job does not wait for another merchant's backlog", async () => {
    const aJobs: string[] = [];
    for (let job = 0; job < A_JOBS; job++) {
      const playerIds = Array.from(
        { length: PLAYERS_PER_JOB },
        (_, index) => `a-${String(job * PLAYERS_PER_JOB + index).padStart(5, '0')}`,
      );
      const response = await post(merchantA, 'rewards/bulkCancelByQuery', { playerIds });
      expect(response.status).toBe(200);
      aJobs.push(response.headers.get('x-job-id') as string);
    }

    const sentAt = Date.now();
    const response = await post(merchantB, 'rewards/bulkCancel', {
      externalIds: Array.from({ length: 10 }, (_, index) => `b-${index + 1}`),
    });
    expect(response.status).toBe(200);
    const bResult = await completed(merchantB, response.headers.get('x-job-id') as string, 30_000);
    const bWaitedMs = Date.now() - sentAt;
    expect(bResult).toEqual({ requested: 10, cancelled: 10, alreadyCancelled: 0, notCancellable: 0, notFound: 0 });
    expect(bWaitedMs).toBeLessThanOrEqual(5_000);

    // A is served too: every job completes, each with exactly its own players' rewards.
    for (const jobId of aJobs) {
      expect(await completed(merchantA, jobId, 180_000)).toEqual({
        players: PLAYERS_PER_JOB,
        cancelled: PLAYERS_PER_JOB * REWARDS_PER_PLAYER,
      });
    }
    const byJob = await sql<{ count: number }>`
      SELECT count(*)::int AS count FROM rewards
      WHERE merchant_id = ${merchantA.id} AND status = 'CANCELLED' AND cancellation_job_id = ANY(${aJobs}::uuid[])
    `.execute(env.db);
    expect(byJob.rows[0]?.count).toBe(A_JOBS * PLAYERS_PER_JOB * REWARDS_PER_PLAYER);
  });
});
