import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { type ServiceProcess, startService } from '../helpers/processes.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * The whole service as it runs in production: the real API and worker entry points as separate
 * processes, configured by environment, called over HTTP by a client that signs like a merchant.
 */

const { env } = useTestContext();
let api: ServiceProcess;
let worker: ServiceProcess;
let merchant: MerchantFixture;

beforeAll(async () => {
  [api, worker] = await Promise.all([startService('api', env), startService('worker', env)]);
  merchant = await createMerchant(env.db);
});
afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
});

const sentHashes: string[] = [];

async function post(path: string, fields: Record<string, unknown>) {
  const body = signedBody(merchant, fields);
  sentHashes.push(body.hash as string);
  return fetch(`${api.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function jobResult(jobId: string) {
  return eventually(
    async () => {
      const response = await post('/api/v1/integration/jobs/status', { jobId });
      const status = (await response.json()) as { state: string; result: Record<string, number> | null };
      return status.state === 'completed' ? status.result : undefined;
    },
    { what: `job ${jobId}` },
  );
}

describe('end to end: real API and worker processes', { timeout: 60_000 }, () => {
  it('cancels by id, by list and by query, and the database shows it', async () => {
    const configuration = await createConfiguration(env.db, {
      merchantId: merchant.id,
      externalId: 'e2e-config',
      startDate: Date.now(),
    });
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: [
        { playerId: 'e2e-1', externalId: 'e2e-r1' },
        { playerId: 'e2e-1', externalId: 'e2e-r2' },
        { playerId: 'e2e-2', externalId: 'e2e-r3' },
        { playerId: 'e2e-3', externalId: 'e2e-r4' },
        { playerId: 'e2e-3', externalId: 'e2e-r5', status: 'USED' },
        { playerId: 'e2e-4', externalId: 'e2e-r6' },
      ],
    });

    const single = await post('/api/v1/integration/rewards/cancel', { id: rewards[0]?.id });
    expect(single.status).toBe(200);
    const bulk = await post('/api/v1/integration/rewards/bulkCancel', { externalIds: ['e2e-r2', 'e2e-r3', 'nope'] });
    expect(bulk.status).toBe(200);
    const query = await post('/api/v1/integration/rewards/bulkCancelByQuery', {
      playerIds: ['e2e-3'],
      externalRewardConfigurationId: 'e2e-config',
    });
    expect(query.status).toBe(200);

    expect(await jobResult(single.headers.get('x-job-id') as string)).toEqual({
      requested: 1,
      cancelled: 1,
      alreadyCancelled: 0,
      notCancellable: 0,
      notFound: 0,
    });
    expect(await jobResult(bulk.headers.get('x-job-id') as string)).toEqual({
      requested: 3,
      cancelled: 2,
      alreadyCancelled: 0,
      notCancellable: 0,
      notFound: 1,
    });
    expect(await jobResult(query.headers.get('x-job-id') as string)).toEqual({ players: 1, cancelled: 1 });

    const rows = await env.db
      .selectFrom('rewards')
      .select(['external_id', 'status', 'cancellation_job_id'])
      .where('merchant_id', '=', merchant.id)
      .orderBy('external_id')
      .execute();
    expect(rows.map((row) => [row.external_id, row.status])).toEqual([
      ['e2e-r1', 'CANCELLED'],
      ['e2e-r2', 'CANCELLED'],
      ['e2e-r3', 'CANCELLED'],
      ['e2e-r4', 'CANCELLED'],
      ['e2e-r5', 'USED'],
      ['e2e-r6', 'ACTIVE'],
    ]);
    expect(rows[0]?.cancellation_job_id).toBe(single.headers.get('x-job-id'));
    expect(rows[3]?.cancellation_job_id).toBe(query.headers.get('x-job-id'));
  });

  it('reads configurations signed as a merchant, and both processes serve health and metrics (the API its metrics on its admin port)', async () => {
    const response = await post('/api/v1/integration/reward-configurations/readAll', { name: 'nothing-matches-this' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    for (const service of [api, worker]) {
      expect((await fetch(`${service.baseUrl}/healthz`)).status).toBe(200);
      const metrics = await (await fetch(`${service.adminUrl}/metrics`)).text();
      expect(metrics).toContain('gateway_queue_jobs{');
    }
    // The API's metrics are on its admin listener only.
    expect((await fetch(`${api.baseUrl}/metrics`)).status).toBe(404);
    const workerMetrics = await (await fetch(`${worker.baseUrl}/metrics`)).text();
    expect(workerMetrics).toMatch(/gateway_rewards_cancelled_total\{[^}]*operation="bulkCancel"[^}]*\} 2/);
    const total = await sql<{ n: number }>`SELECT count(*)::int AS n FROM cancellation_jobs`.execute(env.db);
    expect(total.rows[0]?.n).toBe(3);
  });

  it('logs one line per request and per job, joined by request id, and never a secret or hash', async () => {
    const logs = `${api.output()}\n${worker.output()}`;
    const lines = logs.split('\n').filter((line) => line.startsWith('{'));
    const requests = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
    const jobs = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'job completed');
    expect(requests.length).toBeGreaterThan(0);
    expect(jobs.length).toBe(3);
    for (const job of jobs) {
      const request = requests.find((entry) => entry.jobId === job.jobId);
      expect(request?.requestId).toBe(job.requestId);
      expect(request).toMatchObject({ method: 'POST', status: 200, merchantId: merchant.id });
    }
    expect(sentHashes.length).toBeGreaterThan(0);
    expect(logs).not.toContain(merchant.secretKey);
    for (const hash of sentHashes) expect(logs).not.toContain(hash);
  });
});
