import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { startPythonScenario } from '../helpers/python-client.js';
import { serverOf, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { useTestContext } from '../helpers/test-context.js';

// The Python client's retries against the real service, the refusals provoked for real: a 429 from a
// merchant's rate limit and from its queued-job cap (both set through the admin API), a 503 from a Redis
// taken away behind a TCP proxy. Every retry ends in the job asked for, and in no other.

const { env, api, worker } = useTestContext({ api: true, worker: true });

async function merchantWithRewards(prefix: string, count: number): Promise<MerchantFixture> {
  const merchant = await createMerchant(env.db);
  const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
  await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: Array.from({ length: count }, (_, i) => ({ playerId: `${prefix}-player`, externalId: `${prefix}-${i}` })),
  });
  return merchant;
}

async function setQuotas(merchantId: string, quotas: { maxQueuedJobs?: number; rateLimitPerSecond?: number }) {
  const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchantId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(quotas),
  });
  expect(response.status).toBe(200);
}

/** The merchant's jobs as stored, and how many of its rewards each cancelled. */
async function storedJobs(merchantId: string) {
  const jobs = await env.db
    .selectFrom('cancellation_jobs')
    .select(['id'])
    .where('merchant_id', '=', merchantId)
    .execute();
  const cancelled = await env.db
    .selectFrom('rewards')
    .select(['cancellation_job_id'])
    .where('merchant_id', '=', merchantId)
    .where('status', '=', 'CANCELLED')
    .execute();
  return { jobIds: jobs.map((job) => job.id).sort(), cancelledBy: cancelled.map((row) => row.cancellation_job_id) };
}

interface CancelsOutcome {
  jobIds: string[];
  states: string[];
}

describe('429', () => {
  it("waits out the merchant's queued-job cap and queues each part of a split bulk cancel once", async () => {
    const merchant = await merchantWithRewards('capped', 3_000);
    await setQuotas(merchant.id, { maxQueuedJobs: 1 });
    // The worker takes nothing until the client has met the cap, so that the 429 is certain.
    await Promise.all(worker.running.workers.map((bullWorker) => bullWorker.pause()));
    const externalIds = Array.from({ length: 3_000 }, (_, i) => `capped-${i}`);
    const client = startPythonScenario<{ jobIds: string[]; states: string[]; totals: Record<string, number> }>('bulk', {
      baseUrl: api.baseUrl,
      merchantId: merchant.id,
      secret: merchant.secretKey,
      externalIds,
      maxItems: 1_000,
    });
    try {
      await client.stderrMatches(/retry 429 7/);
    } finally {
      for (const bullWorker of worker.running.workers) bullWorker.resume();
    }
    const { outcome } = await client.done;
    expect(outcome.error).toBeUndefined();
    expect(outcome.retries.length).toBeGreaterThan(0);
    const capped = outcome.retries.filter((retry) => retry.status === 429 && retry.errorCode === 7);
    expect(capped.length).toBeGreaterThan(0);
    // The cap's Retry-After (5 s) was honoured, never cut short.
    for (const retry of capped) expect(retry.delay).toBeGreaterThanOrEqual(5);
    expect(outcome.jobIds).toHaveLength(3);
    expect(outcome.states).toEqual(['completed', 'completed', 'completed']);
    expect(outcome.totals).toMatchObject({ requested: 3_000, cancelled: 3_000, notFound: 0 });
    const stored = await storedJobs(merchant.id);
    expect(stored.jobIds).toEqual([...outcome.jobIds].sort());
    expect(stored.cancelledBy).toHaveLength(3_000);
    expect(new Set(stored.cancelledBy)).toEqual(new Set(outcome.jobIds));
  }, 120_000);

  it("retries after the merchant's rate limit, with each cancel queued once", async () => {
    const merchant = await merchantWithRewards('rated', 3);
    await setQuotas(merchant.id, { rateLimitPerSecond: 1 });
    const { outcome } = await startPythonScenario<CancelsOutcome>('cancels', {
      baseUrl: api.baseUrl,
      merchantId: merchant.id,
      secret: merchant.secretKey,
      externalIds: ['rated-0', 'rated-1', 'rated-2'],
    }).done;
    expect(outcome.error).toBeUndefined();
    const rateLimited = outcome.retries.filter((retry) => retry.status === 429 && retry.errorCode === 7);
    expect(rateLimited.length).toBeGreaterThan(0);
    // Retry-After (whole seconds, at least 1) was waited, with jitter on top.
    for (const retry of rateLimited) expect(retry.delay).toBeGreaterThanOrEqual(1);
    expect(new Set(outcome.jobIds).size).toBe(3);
    expect(outcome.states).toEqual(['completed', 'completed', 'completed']);
    const stored = await storedJobs(merchant.id);
    expect(stored.jobIds).toEqual([...outcome.jobIds].sort());
    expect(stored.cancelledBy.sort()).toEqual([...outcome.jobIds].sort());
  }, 60_000);
});

describe('503', () => {
  let proxy: TcpProxy;
  let proxiedApi: TestApi;
  beforeAll(async () => {
    proxy = await startTcpProxy(serverOf(env.redisUrl));
    proxiedApi = await startTestApi(env, {}, { redisUrl: `redis://127.0.0.1:${proxy.port}` });
  });
  afterAll(async () => {
    await proxiedApi?.close();
    await proxy?.close();
  });

  it("retries while the API's Redis is away and queues the cancel once it is back", async () => {
    const merchant = await merchantWithRewards('outage', 1);
    await proxy.refuse();
    const client = startPythonScenario<CancelsOutcome>('cancels', {
      baseUrl: proxiedApi.baseUrl,
      merchantId: merchant.id,
      secret: merchant.secretKey,
      externalIds: ['outage-0'],
    });
    try {
      await client.stderrMatches(/retry 503 11/);
    } finally {
      await proxy.restore();
    }
    const { outcome } = await client.done;
    expect(outcome.error).toBeUndefined();
    expect(outcome.retries.some((retry) => retry.status === 503 && retry.errorCode === 11)).toBe(true);
    expect(outcome.jobIds).toHaveLength(1);
    expect(outcome.states).toEqual(['completed']);
    const stored = await storedJobs(merchant.id);
    expect(stored.jobIds).toEqual(outcome.jobIds);
    expect(stored.cancelledBy).toEqual(outcome.jobIds);
  }, 60_000);
});
