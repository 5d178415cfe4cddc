import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { lockJobRecord, lockRewards, lockTable } from '../helpers/row-locks.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

/**
 * A bulk job's end is decided once (src/shared/jobs/job-abort.ts `decideEnd`): an abort that lands after
 * the worker decided `completed`, while it is still writing the audit row and before BullMQ and the webhook
 * hear of the end, is refused (409), and the audit row, the job status and the webhook event all say
 * `completed`. Before, the mark was read twice: the audit row said `completed`, the status and the webhook
 * `cancelled`. The window is held open by a row lock on the job's audit row.
 *
 * The outcome is handed as decided to every sink (src/worker/jobs/job-end/): none reads the mark again. The
 * second test aborts later still, once BullMQ has marked the job completed and before its webhook event
 * is queued (held open by a lock on the webhooks table, read for each event: the merchant cache is off).
 */

const { env, api } = useTestContext({
  settings: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCALE: '0.0001',
    MERCHANT_CACHE_TTL_MS: '0',
  },
  api: true,
  worker: true,
});
let merchant: MerchantFixture;
let receiver: WebhookReceiver;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  receiver = await startWebhookReceiver();
  const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.url}/hooks` }),
  });
  expect(response.status).toBe(200);
});
afterAll(async () => {
  await receiver?.close();
});

/** Statements of this database waiting for a lock whose text writes the job's end (recordJobsFinished). */
async function endWriteWaiting(): Promise<boolean> {
  const result = await sql<{ waiting: number }>`
    SELECT count(*)::int AS waiting FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO cancellation_jobs%'
  `.execute(env.db);
  return (result.rows[0]?.waiting ?? 0) > 0;
}

/** Statements of this database waiting for a lock on the webhooks table (the notifier's lookup of the merchant's webhook). */
async function webhookLookupWaiting(): Promise<boolean> {
  const result = await sql<{ waiting: number }>`
    SELECT count(*)::int AS waiting FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%merchant_webhooks%'
  `.execute(env.db);
  return (result.rows[0]?.waiting ?? 0) > 0;
}

async function auditState(jobId: string): Promise<string | undefined> {
  const row = await sql<{ state: string }>`SELECT state FROM cancellation_jobs WHERE id = ${jobId}::uuid`.execute(
    env.db,
  );
  return row.rows[0]?.state;
}

type ReceivedEvent = { type: string; data: { jobId: string; state: string; result: unknown } };

function eventOf(jobId: string): ReceivedEvent | undefined {
  return receiver.received
    .map((request) => JSON.parse(request.body) as ReceivedEvent)
    .find((body) => body.data.jobId === jobId);
}

describe('an abort between a job’s decided end and its announcement', () => {
  it('is refused, and the audit row, the job status and the webhook event agree: completed', async () => {
    const configuration = await createConfiguration(env.db, {
      merchantId: merchant.id,
      externalId: 'race-cfg',
      startDate: Date.now(),
    });
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: Array.from({ length: 5 }, (_, i) => ({ playerId: `race-p${i}` })),
    });
    const ids = rewards.map((reward) => reward.id);

    // The job starts (its audit row exists) and waits at its first batch; then its audit row is locked
    // and the batch let go: the worker decides the end and blocks writing it.
    const rewardLocks = await lockRewards(env.databaseUrl, ids);
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', { ids });
    await eventually(
      async () =>
        (await sql<{ id: string }>`SELECT id FROM cancellation_jobs WHERE id = ${jobId}::uuid`.execute(env.db)).rows[0],
      { what: 'the job to start' },
    );
    const recordLock = await lockJobRecord(env.databaseUrl, jobId);
    await rewardLocks.release();
    await eventually(async () => ((await endWriteWaiting()) ? true : undefined), { what: 'the end to be written' });

    const abort = await api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId }));
    expect(abort.status).toBe(409);
    expect(await abort.json()).toMatchObject({ errorCode: 13 });
    await recordLock.release();

    const status = await waitForJob(api, merchant, jobId);
    expect(status.state).toBe('completed');
    expect(status.result).toMatchObject({ cancelled: 5 });
    const row = await sql<{ state: string }>`SELECT state FROM cancellation_jobs WHERE id = ${jobId}::uuid`.execute(
      env.db,
    );
    expect(row.rows[0]?.state).toBe('completed');
    const event = await eventually(
      async () =>
        receiver.received
          .map((request) => JSON.parse(request.body) as { type: string; data: { jobId: string; state: string } })
          .find((body) => body.data.jobId === jobId),
      { what: 'the webhook event' },
    );
    expect(event).toMatchObject({ type: 'job.completed', data: { jobId, state: 'completed' } });
  });

  it('after BullMQ marked the job completed, before its webhook event: refused, and all three say completed', async () => {
    const configuration = await createConfiguration(env.db, {
      merchantId: merchant.id,
      externalId: 'race-cfg-2',
      startDate: Date.now(),
    });
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: Array.from({ length: 4 }, (_, i) => ({ playerId: `race2-p${i}` })),
    });
    const ids = rewards.map((reward) => reward.id);

    // Every read of the webhooks table waits: the job runs to its end, BullMQ marks it completed, and
    // its announcement blocks on the lookup of the merchant's webhook.
    const webhooksLock = await lockTable(env.databaseUrl, 'merchant_webhooks');
    let released = false;
    try {
      const jobId = await requestCancellation(api, merchant, 'bulkCancel', { ids });
      await eventually(async () => ((await webhookLookupWaiting()) ? true : undefined), {
        what: 'the announcement to wait',
      });
      // In the window: completed in Redis and in the audit row, not announced yet.
      expect((await waitForJob(api, merchant, jobId)).state).toBe('completed');
      expect(await auditState(jobId)).toBe('completed');
      expect(eventOf(jobId)).toBeUndefined();

      const abort = await api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId }));
      expect(abort.status).toBe(409);
      expect(await abort.json()).toMatchObject({ errorCode: 13 });
      await webhooksLock.release();
      released = true;

      const event = await eventually(async () => eventOf(jobId), { what: 'the webhook event' });
      expect(event).toMatchObject({
        type: 'job.completed',
        data: { jobId, state: 'completed', result: { cancelled: 4 } },
      });
      const status = await waitForJob(api, merchant, jobId);
      expect(status.state).toBe('completed');
      expect(status.result).toMatchObject({ cancelled: 4 });
      expect(await auditState(jobId)).toBe('completed');
    } finally {
      if (!released) await webhooksLock.release();
    }
  });
});
