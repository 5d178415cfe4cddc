import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { fetchJobReport, jobReportPath } from '../helpers/job-report.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker, type TestWorker } from '../helpers/worker.js';

const { env, api } = useTestContext({ api: true });
let worker: TestWorker | undefined;
let alice: MerchantFixture;
let mallory: MerchantFixture;
let configurationId: string;

beforeAll(async () => {
  alice = await createMerchant(env.db);
  mallory = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: alice.id, startDate: Date.now() })).id;
});
afterAll(async () => {
  await worker?.close();
});

function errorOf(body: Buffer): unknown {
  return JSON.parse(body.toString('utf8'));
}

describe('jobs/report before a job has finished', () => {
  it('a job not finished yet (queued, no worker running) is 409 errorCode 13 with Retry-After', async () => {
    const jobId = await requestCancellation(api, alice, 'bulkCancel', { externalIds: ['not-yet'] });
    const answer = await fetchJobReport(api, alice, jobId);
    expect(answer.status).toBe(409);
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    expect(errorOf(answer.body)).toEqual({ errorCode: 13, errorMessage: 'The job has not finished' });
  });
});

describe('jobs/report security', () => {
  let aliceJob: string;
  let aliceCancel: string;

  beforeAll(async () => {
    worker = await startTestWorker(env);
    const [reward, other] = await createRewards(env.db, {
      merchantId: alice.id,
      rewardConfigurationId: configurationId,
      rewards: [{ playerId: 'a1', externalId: 'alice-secret-reward' }, { playerId: 'a2' }],
    });
    aliceJob = await requestCancellation(api, alice, 'bulkCancel', { ids: [reward?.id] });
    aliceCancel = await requestCancellation(api, alice, 'cancel', { id: other?.id });
    await waitForJob(api, alice, aliceJob);
    await waitForJob(api, alice, aliceCancel);
  });

  it("another merchant's finished job is 404, as an unknown one: nothing of it is streamed", async () => {
    expect((await fetchJobReport(api, alice, aliceJob)).status).toBe(200);
    const foreign = await fetchJobReport(api, mallory, aliceJob);
    const unknown = await fetchJobReport(api, mallory, '00000000-0000-4000-8000-000000000000');
    const malformed = await fetchJobReport(api, mallory, 'not-a-job');
    for (const refused of [foreign, unknown, malformed]) {
      expect(refused.status).toBe(404);
      expect(errorOf(refused.body)).toEqual({ errorCode: 10, errorMessage: 'Job not found' });
      expect(refused.body.toString('utf8')).not.toContain('alice-secret-reward');
    }
  });

  it('a single cancel has no report: 400 errorCode 1 pointing at jobs/status', async () => {
    const answer = await fetchJobReport(api, alice, aliceCancel);
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body)).toMatchObject({ errorCode: 1, errorMessage: expect.stringMatching(/jobs\/status/) });
  });

  it('an unsigned or wrongly signed request is 401 before anything of the job is read', async () => {
    const forged = await api.post(jobReportPath, { ...signedBody(alice, { jobId: aliceJob }), hash: 'ab'.repeat(32) });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ errorCode: 2 });
    const unsigned = await api.post(jobReportPath, { merchantId: alice.id, jobId: aliceJob });
    expect(unsigned.status).toBe(400);
  });

  it("a report takes one of the merchant's heavy-read places while it streams and gives it back at its end", async () => {
    const places = env.config.HEAVY_READS_PER_MERCHANT;
    // One after another, more reports than places: each gave its place back when its body ended.
    for (let i = 0; i < places + 2; i++) expect((await fetchJobReport(api, alice, aliceJob)).status).toBe(200);

    // Every place taken (as long reads would hold them): the next report is 429 before a byte is streamed.
    let free: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => {
      free = resolve;
    });
    const holders = Array.from({ length: places }, () => api.deps.heavyReads.run(alice.id, () => holding));
    try {
      const refused = await fetchJobReport(api, alice, aliceJob);
      expect(refused.status).toBe(429);
      expect(errorOf(refused.body)).toMatchObject({ errorCode: 7 });
      // Another merchant's places are its own.
      expect((await fetchJobReport(api, mallory, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    } finally {
      free();
      await Promise.all(holders);
    }
    expect((await fetchJobReport(api, alice, aliceJob)).status).toBe(200);
  });
});
