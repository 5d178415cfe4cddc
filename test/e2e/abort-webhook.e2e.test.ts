import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type ServiceProcess, startService } from '../helpers/processes.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

/**
 * Job control end to end, with real API and worker processes: a 200,000-reward bulkCancelByQuery, split
 * into parts that two worker replicas share, is aborted mid-way. It stops within one batch per running part,
 * its counts equal the rewards that carry its id, and the merchant's webhook hears `job.cancelled`
 * once, with a signature the reference implementation (the `standardwebhooks` package) accepts.
 */

const PLAYERS = 2_000;
const REWARDS_PER_PLAYER = 100;
const BATCH = 10_000;

const { env } = useTestContext();
let api: ServiceProcess;
let workers: ServiceProcess[] = [];
let merchant: MerchantFixture;
let receiver: WebhookReceiver;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  const configuration = await createConfiguration(env.db, {
    merchantId: merchant.id,
    externalId: 'abort-e2e',
    startDate: Date.now(),
  });
  await sql`
    INSERT INTO rewards (merchant_id, reward_configuration_id, player_id, external_id, status)
    SELECT ${merchant.id}::uuid, ${configuration.id}::uuid, 'p-' || lpad(p::text, 5, '0'), 'r-' || p || '-' || n, 'ACTIVE'
    FROM generate_series(0, ${PLAYERS - 1}) AS p, generate_series(1, ${REWARDS_PER_PLAYER}) AS n
  `.execute(env.db);
  await sql`ANALYZE rewards`.execute(env.db);
  receiver = await startWebhookReceiver();
  const settings = {
    ADMIN_TOKEN: env.config.ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Four parts of 500 players (50,000 rewards each), shared by the two workers.
    FANOUT_THRESHOLD: '500',
    FANOUT_CHUNK_SIZE: '500',
    CANCEL_BATCH_SIZE: String(BATCH),
    LOG_LEVEL: 'warn',
  };
  [api, ...workers] = await Promise.all([
    startService('api', env, settings),
    startService('worker', env, settings),
    startService('worker', env, settings),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([api?.stop(), ...workers.map((worker) => worker.stop())]);
  await receiver?.close();
});

async function post(path: string, fields: Record<string, unknown>): Promise<Response> {
  return fetch(`${api.baseUrl}/api/v1/integration/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signedBody(merchant, fields)),
  });
}

async function carryingJob(jobId: string): Promise<number> {
  const result = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM rewards WHERE merchant_id = ${merchant.id} AND cancellation_job_id = ${jobId}::uuid
  `.execute(env.db);
  return result.rows[0]?.count ?? 0;
}

describe('aborting a large job on two worker replicas', { timeout: 240_000 }, () => {
  it('stops within one batch per running part, counts exactly, and tells the webhook once, signed', async () => {
    const put = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/hooks`, events: ['job.cancelled', 'job.completed'] }),
    });
    expect(put.status).toBe(200);
    const { secret } = (await put.json()) as { secret: string };

    const playerIds = Array.from({ length: PLAYERS }, (_, index) => `p-${String(index).padStart(5, '0')}`);
    const accepted = await post('rewards/bulkCancelByQuery', { playerIds });
    expect(accepted.status).toBe(200);
    const jobId = accepted.headers.get('x-job-id') as string;

    // Mid-way: some batches committed, most of the job still to do.
    await eventually(async () => ((await carryingJob(jobId)) >= BATCH ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: 'the first batch to commit',
    });
    const aborted = await post('jobs/cancel', { jobId });
    expect(aborted.status).toBe(200);
    const atAbort = await carryingJob(jobId);
    expect(((await aborted.json()) as { state: string }).state).toMatch(/^cancell(ing|ed)$/);

    const status = await eventually(
      async () => {
        const response = await post('jobs/status', { jobId });
        const body = (await response.json()) as { state: string; result: Record<string, number> | null };
        return body.state === 'cancelled' ? body : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the job to be cancelled' },
    );
    const final = await carryingJob(jobId);
    // Within one batch per bulk job a worker replica runs at once of the moment the abort was asked.
    expect(final - atAbort).toBeLessThanOrEqual(workers.length * env.config.WORKER_BULK_CONCURRENCY * BATCH);
    expect(final).toBeLessThan(PLAYERS * REWARDS_PER_PLAYER);
    expect(status.result).toEqual({ players: PLAYERS, cancelled: final });
    const audit = await env.db.selectFrom('cancellation_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
    expect(audit).toMatchObject({ state: 'cancelled', cancelled: final });

    const deliveries = await eventually(async () => (receiver.received.length >= 1 ? receiver.received : undefined), {
      timeoutMs: 30_000,
      what: 'the webhook',
    });
    // Nothing more arrives: one event, once.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(receiver.received).toHaveLength(1);
    const [delivery] = deliveries;
    const verified = new Webhook(secret).verify(delivery?.body as string, delivery?.headers as Record<string, string>);
    expect(verified).toMatchObject({
      type: 'job.cancelled',
      data: { jobId, state: 'cancelled', result: { players: PLAYERS, cancelled: final } },
    });
  });
});
