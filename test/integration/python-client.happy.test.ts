import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { runPythonScenario } from '../helpers/python-client.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// The Python client (clients/python) against the real service: API and worker on this file's database
// and queue prefix, the client in a python3 process of its own (clients/python/tests/live_driver.py).

const { env, api } = useTestContext({
  settings: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.0001' },
  api: true,
  worker: true,
});
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

interface Reward {
  id: string;
  externalId: string | null;
  playerId: string;
}

async function merchantWithRewards(
  prefix: string,
  count: number,
  options: { signatureVersion?: 1 | 2 } = {},
): Promise<{ merchant: MerchantFixture; configurationIds: string[]; rewards: Reward[] }> {
  const merchant = await createMerchant(env.db, options);
  const configurations = await Promise.all(
    [0, 1].map((i) => createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() - i * 60_000 })),
  );
  const rewards: Reward[] = [];
  // In statements of 5,000 rows: one statement's parameters are limited to 65,535.
  for (let first = 0; first < count; first += 5_000) {
    const slice = Array.from({ length: Math.min(5_000, count - first) }, (_, i) => ({
      playerId: `${prefix}-player-${(first + i) % 7}`,
      externalId: `${prefix}-${first + i}`,
    }));
    rewards.push(
      ...(await createRewards(env.db, {
        merchantId: merchant.id,
        rewardConfigurationId: configurations[0]?.id ?? '',
        rewards: slice,
      })),
    );
  }
  return { merchant, configurationIds: configurations.map((configuration) => configuration.id), rewards };
}

const credentials = (merchant: MerchantFixture) => ({
  baseUrl: api.baseUrl,
  merchantId: merchant.id,
  secret: merchant.secretKey,
});

interface BasicsOutcome {
  configurations: string[];
  jobId: string;
  status: { state: string; operation: string; result: Record<string, number> };
  rewards: Reward[];
}

describe.each([1, 2] as const)('the Python client, signature version %i', (signatureVersion) => {
  it('reads every configuration page by page, cancels, waits for the job and lists what it cancelled', async () => {
    const { merchant, configurationIds, rewards } = await merchantWithRewards(`v${signatureVersion}`, 3, {
      signatureVersion,
    });
    const outcome = await runPythonScenario<BasicsOutcome>('basics', {
      ...credentials(merchant),
      signatureVersion,
      externalId: rewards[1]?.externalId,
    });
    expect(outcome.error).toBeUndefined();
    // Pages of one (offset paging) gave both configurations, newest first.
    expect(outcome.configurations).toEqual(configurationIds);
    expect(outcome.status).toMatchObject({
      state: 'completed',
      operation: 'cancel',
      result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
    });
    expect(outcome.rewards).toEqual([
      { id: rewards[1]?.id, externalId: rewards[1]?.externalId, playerId: rewards[1]?.playerId },
    ]);
    expect(outcome.retries).toEqual([]);
    const row = await env.db
      .selectFrom('rewards')
      .select(['status', 'cancellation_job_id'])
      .where('id', '=', rewards[1]?.id ?? '')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'CANCELLED', cancellation_job_id: outcome.jobId });
  });
});

describe.each([1, 2] as const)('watch, signature version %i', (signatureVersion) => {
  it('follows a bulk job through the signed event stream to its final event', async () => {
    const { merchant, rewards } = await merchantWithRewards(`watch-v${signatureVersion}`, 20, { signatureVersion });
    const outcome = await runPythonScenario<{
      jobId: string;
      events: Array<{
        type: string;
        id: string;
        status: { jobId: string; state: string; result: Record<string, number> };
      }>;
    }>('watch', {
      ...credentials(merchant),
      signatureVersion,
      externalIds: rewards.map((reward) => reward.externalId),
    });
    expect(outcome.error).toBeUndefined();
    const final = outcome.events.at(-1);
    expect(final).toMatchObject({
      type: 'completed',
      status: { jobId: outcome.jobId, state: 'completed', result: { requested: 20, cancelled: 20 } },
    });
    expect(outcome.events.slice(0, -1).every((event) => event.type === 'progress')).toBe(true);
  });
});

it('a version 1 client is refused by a version 2 merchant (errorCode 2, not retried)', async () => {
  const { merchant, rewards } = await merchantWithRewards('mismatch', 1, { signatureVersion: 2 });
  const outcome = await runPythonScenario<BasicsOutcome>('basics', {
    ...credentials(merchant),
    signatureVersion: 1,
    externalId: rewards[0]?.externalId,
  });
  expect(outcome.error).toEqual({ status: 401, errorCode: 2 });
  expect(outcome.retries).toEqual([]);
});

it("corrects a local clock 10 minutes slow from the service's Date header", async () => {
  const { merchant, rewards } = await merchantWithRewards('skew', 1);
  const outcome = await runPythonScenario<BasicsOutcome & { clockSkewMs: number }>('basics', {
    ...credentials(merchant),
    externalId: rewards[0]?.externalId,
    clockOffsetMs: -600_000,
  });
  expect(outcome.error).toBeUndefined();
  expect(outcome.status).toMatchObject({ state: 'completed', result: { cancelled: 1 } });
  // Date has a resolution of one second: the skew learnt is the offset within about a second.
  expect(Math.abs(outcome.clockSkewMs - 600_000)).toBeLessThan(2_000);
});

interface BulkOutcome {
  jobIds: string[];
  states: string[];
  totals: Record<string, number>;
  listed: number;
  unapplied: { kind: string; identifier: string; outcome: string }[];
}

describe('bulk cancel of any size', () => {
  it('splits 25,000 identifiers into three requests and completes them with exact counts', async () => {
    const { merchant, rewards } = await merchantWithRewards('bulk', 24_995);
    const used = rewards.slice(0, 5);
    await env.db
      .updateTable('rewards')
      .set({ status: 'USED' })
      .where(
        'id',
        'in',
        used.map((reward) => reward.id),
      )
      .execute();
    const unknown = Array.from({ length: 5 }, (_, i) => `bulk-unknown-${i}`);
    const externalIds = [...rewards.map((reward) => reward.externalId), ...unknown];
    expect(externalIds).toHaveLength(25_000);

    const outcome = await runPythonScenario<BulkOutcome>('bulk', { ...credentials(merchant), externalIds });
    expect(outcome.error).toBeUndefined();
    expect(outcome.jobIds).toHaveLength(3);
    expect(new Set(outcome.jobIds).size).toBe(3);
    expect(outcome.states).toEqual(['completed', 'completed', 'completed']);
    expect(outcome.totals).toEqual({
      requested: 25_000,
      cancelled: 24_990,
      alreadyCancelled: 0,
      notCancellable: 5,
      notFound: 5,
    });
    expect(outcome.listed).toBe(24_990);
    // Which ones were not cancelled, and why.
    const sortedByIdentifier = [...outcome.unapplied].sort((a, b) => a.identifier.localeCompare(b.identifier));
    expect(sortedByIdentifier).toEqual(
      [
        ...used.map((reward) => ({
          kind: 'externalId',
          identifier: reward.externalId as string,
          outcome: 'notCancellable',
        })),
        ...unknown.map((identifier) => ({ kind: 'externalId', identifier, outcome: 'notFound' })),
      ].sort((a, b) => a.identifier.localeCompare(b.identifier)),
    );

    const jobs = await env.db
      .selectFrom('cancellation_jobs')
      .select(['id', 'requested'])
      .where('merchant_id', '=', merchant.id)
      .execute();
    expect(jobs.map((job) => job.id).sort()).toEqual([...outcome.jobIds].sort());
    expect(jobs.map((job) => job.requested).sort()).toEqual([10_000, 10_000, 5_000]);
    const cancelled = await env.db
      .selectFrom('rewards')
      .select((eb) => [
        eb.fn.countAll<string>().as('count'),
        eb.fn.count<string>('cancellation_job_id').distinct().as('jobs'),
      ])
      .where('merchant_id', '=', merchant.id)
      .where('status', '=', 'CANCELLED')
      .executeTakeFirstOrThrow();
    expect(cancelled).toEqual({ count: '24990', jobs: '3' });
  }, 120_000);
});

async function setWebhook(merchantId: string): Promise<string> {
  const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchantId}/webhook`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.url}/hooks/${merchantId}` }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { secret: string }).secret;
}

describe('webhook verification', () => {
  it('verifies events signed with either of two secrets (before and after the webhook was set again)', async () => {
    const { merchant, rewards } = await merchantWithRewards('hooks', 2);
    const path = `/hooks/${merchant.id}`;
    const webhooks: Array<{ headers: Record<string, string>; body: string }> = [];
    const secrets: string[] = [];
    const jobIds: string[] = [];
    for (const reward of rewards) {
      secrets.push(await setWebhook(merchant.id));
      const outcome = await runPythonScenario<BasicsOutcome>('basics', {
        ...credentials(merchant),
        externalId: reward.externalId,
      });
      jobIds.push(outcome.jobId);
      const delivered = await eventually(
        async () => receiver.received.find((request) => request.path === path && request.body.includes(outcome.jobId)),
        { what: `the webhook of job ${outcome.jobId}` },
      );
      webhooks.push({ headers: delivered.headers as Record<string, string>, body: delivered.body });
    }
    expect(secrets[0]).not.toBe(secrets[1]);

    const both = await runPythonScenario<{ outcomes: unknown[] }>('verify', { secrets, webhooks });
    expect(both.outcomes).toEqual(jobIds.map((jobId) => ({ type: 'job.completed', jobId })));

    // Each secret alone verifies its own event only; a body changed by one byte verifies with neither.
    const newOnly = await runPythonScenario<{ outcomes: Array<Record<string, string>> }>('verify', {
      secrets: [secrets[1]],
      webhooks: [...webhooks, { ...webhooks[1], body: `${webhooks[1]?.body} ` }],
    });
    expect(newOnly.outcomes[0]).toHaveProperty('refused');
    expect(newOnly.outcomes[1]).toEqual({ type: 'job.completed', jobId: jobIds[1] });
    expect(newOnly.outcomes[2]).toHaveProperty('refused');
    const oldOnly = await runPythonScenario<{ outcomes: Array<Record<string, string>> }>('verify', {
      secrets: [secrets[0]],
      webhooks,
    });
    expect(oldOnly.outcomes[0]).toEqual({ type: 'job.completed', jobId: jobIds[0] });
    expect(oldOnly.outcomes[1]).toHaveProperty('refused');
  });
});

describe('webhooks managed through the Python client', () => {
  it('sets the endpoint, rotates the secret, sends a test event that verifies with either secret, lists, redelivers and recovers', async () => {
    const merchant = await createMerchant(env.db);
    const base = { baseUrl: api.baseUrl, merchantId: merchant.id, secret: merchant.secretKey };
    const path = `/py-self/${merchant.id}`;
    const setup = await runPythonScenario<{ before: unknown; endpoint: any; secrets: string[]; eventId: string }>(
      'webhook_setup',
      { ...base, url: `${receiver.url}${path}` },
    );
    expect(setup.before).toBeNull();
    expect(setup.endpoint).toMatchObject({ url: `${receiver.url}${path}`, enabled: true });
    expect(JSON.stringify(setup.endpoint)).not.toContain('whsec_');
    const test = await eventually(async () => receiver.withId(setup.eventId)[0], { what: 'test event' });
    for (const secret of setup.secrets) {
      expect(new Webhook(secret).verify(test.body, test.headers as Record<string, string>)).toMatchObject({
        type: 'webhook.test',
      });
    }
    await eventually(
      async () =>
        (await env.db.selectFrom('webhook_deliveries').select('state').where('merchant_id', '=', merchant.id).execute())
          .map((row) => row.state)
          .join() === 'delivered' || undefined,
      { what: 'test event delivered' },
    );

    const log = await runPythonScenario<{ deliveries: any[]; redelivered: string; recovery: any; removed: boolean }>(
      'webhook_log',
      { ...base, eventId: setup.eventId, since: Date.now() - 60_000 },
    );
    expect(log.deliveries).toHaveLength(1);
    expect(log.deliveries[0]).toMatchObject({ eventId: setup.eventId, type: 'webhook.test', state: 'delivered' });
    expect(log.deliveries[0].attempts).toHaveLength(1);
    expect(log.redelivered).toBe(setup.eventId);
    expect(log.recovery).toMatchObject({ events: 0 });
    expect(log.removed).toBe(true);
    await eventually(async () => (receiver.withId(setup.eventId).length === 2 ? true : undefined), {
      what: 'redelivery',
    });
  });
});
interface ReportOutcome {
  error?: unknown;
  jobId: string;
  status: { state: string; result: Record<string, number> };
  saved: Record<'gzip' | 'plain', { summary: Record<string, unknown>; text: string }>;
}

describe('job report', () => {
  it('saves the report of a finished bulkCancel to a file, gzip or not, verified, adding up to the job counts', async () => {
    const { merchant, rewards } = await merchantWithRewards('report', 3);
    const externalIds = [...rewards.slice(0, 2).map((reward) => reward.externalId as string), 'report-missing'];
    const directory = mkdtempSync(join(tmpdir(), 'python-client-report-'));
    const outcome = await runPythonScenario<ReportOutcome>('report', {
      ...credentials(merchant),
      externalIds,
      directory,
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.status.state).toBe('completed');
    expect(outcome.saved.gzip.text).toBe(outcome.saved.plain.text);
    for (const { summary } of Object.values(outcome.saved)) {
      expect(summary).toMatchObject({
        jobId: outcome.jobId,
        lines: 3,
        cancelled: 2,
        notFound: 1,
        result: outcome.status.result,
      });
    }
    const lines = outcome.saved.plain.text
      .trimEnd()
      .split('\n')
      .slice(0, -1)
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.externalId, line.outcome]).sort()).toEqual([
      ['report-0', 'cancelled'],
      ['report-1', 'cancelled'],
      ['report-missing', 'notFound'],
    ]);
  });
});
