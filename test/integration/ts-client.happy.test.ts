import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MerchantClient, verifyWebhook } from '../../clients/typescript/src/index.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

/**
 * The TypeScript client (clients/typescript) against the running service: v1 and v2,
 * a 25,000-id bulk cancel split and completed with exact counts, retries after a 429 and a 503 without
 * duplicate jobs, webhook verification with two secrets.
 */

const { env, api } = useTestContext({ settings: { WEBHOOK_ALLOW_PRIVATE: 'true' }, api: true, worker: true });
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const clientFor = (merchant: MerchantFixture, options: { baseUrl?: string; signatureVersion?: 1 | 2 } = {}) =>
  new MerchantClient({ baseUrl: api.baseUrl, merchantId: merchant.id, secret: merchant.secretKey, ...options });

async function withRewards(merchant: MerchantFixture, externalIds: string[]) {
  const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
  // In slices: one INSERT has at most 65,535 parameters.
  for (let start = 0; start < externalIds.length; start += 5_000) {
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: externalIds
        .slice(start, start + 5_000)
        .map((externalId, i) => ({ playerId: `player-${i % 50}`, externalId })),
    });
  }
  return configuration;
}

async function jobRowsOf(merchantId: string): Promise<number> {
  const rows = await env.db
    .selectFrom('cancellation_jobs')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow();
  return Number(rows.n);
}

describe.each([1, 2] as const)('signature version %i', (version) => {
  it('reads configurations, cancels, waits for the job, lists its rewards and finds it among the jobs', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: version });
    const configuration = await withRewards(merchant, [`v${version}-a`, `v${version}-b`]);
    const client = clientFor(merchant, { signatureVersion: version });

    expect((await client.readAll()).map((each) => each.id)).toEqual([configuration.id]);
    const jobId = await client.cancel({ externalId: `v${version}-a` });
    const status = await client.waitForJob(jobId);
    expect(status).toMatchObject({ state: 'completed', result: { cancelled: 1 } });
    const rewards = [];
    for await (const reward of client.jobRewards(jobId)) rewards.push(reward.externalId);
    expect(rewards).toEqual([`v${version}-a`]);
    const jobs = [];
    for await (const job of client.jobs()) jobs.push(job.jobId);
    expect(jobs).toEqual([jobId]);
  });
});

describe.each([1, 2] as const)('watch, signature version %i', (version) => {
  it('follows a bulk job to its final event through the signed event stream', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: version });
    const ids = Array.from({ length: 30 }, (_, i) => `watch-v${version}-${i}`);
    await withRewards(merchant, ids);
    const client = clientFor(merchant, { signatureVersion: version });
    const [jobId] = await client.bulkCancel({ externalIds: ids });
    const events = [];
    for await (const event of client.watch(jobId as string)) events.push(event);
    const final = events.at(-1);
    expect(final).toMatchObject({
      type: 'completed',
      status: { jobId, state: 'completed', result: { cancelled: 30 } },
    });
    expect(events.slice(0, -1).every((event) => event.type === 'progress')).toBe(true);
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  });
});

describe('a bulk cancel of any size', () => {
  it('splits 25,000 ids into requests within the limits and completes them with exact counts', async () => {
    const merchant = await createMerchant(env.db);
    const externalIds = Array.from({ length: 25_000 }, (_, i) => `bulk-${i}`);
    await withRewards(merchant, externalIds);
    const client = clientFor(merchant);

    const jobIds = await client.bulkCancel({ externalIds: [...externalIds, 'bulk-missing'] });
    expect(jobIds).toHaveLength(3);
    expect(new Set(jobIds).size).toBe(3);
    const results = await Promise.all(jobIds.map((jobId) => client.waitForJob(jobId, { timeoutMs: 120_000 })));
    expect(results.map((status) => status.state)).toEqual(['completed', 'completed', 'completed']);
    const sum = (key: string) => results.reduce((total, status) => total + (status.result?.[key] ?? 0), 0);
    expect(results.map((status) => status.result?.requested)).toEqual([10_000, 10_000, 5_001]);
    expect([sum('cancelled'), sum('notFound'), sum('alreadyCancelled')]).toEqual([25_000, 1, 0]);
    const unapplied = [];
    for (const jobId of jobIds) for await (const entry of client.jobUnapplied(jobId)) unapplied.push(entry);
    expect(unapplied).toEqual([{ kind: 'externalId', identifier: 'bulk-missing', outcome: 'notFound' }]);
    const cancelled = await env.db
      .selectFrom('rewards')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('merchant_id', '=', merchant.id)
      .where('status', '=', 'CANCELLED')
      .executeTakeFirstOrThrow();
    expect(Number(cancelled.n)).toBe(25_000);
  }, 180_000);
});

describe('retries', () => {
  it('retries a 429 after Retry-After and queues one job', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 1 });
    await withRewards(merchant, ['limited-1']);
    const client = clientFor(merchant);
    await client.readAll(); // spends the second's one request
    const started = Date.now();
    const jobId = await client.cancel({ externalId: 'limited-1' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500); // it waited for the window
    expect((await client.waitForJob(jobId)).result).toMatchObject({ cancelled: 1 });
    expect(await jobRowsOf(merchant.id)).toBe(1);
  });

  it('retries after a 503 whose job was stored (the answer lost) under the same Idempotency-Key: one job', async () => {
    const merchant = await createMerchant(env.db);
    await withRewards(merchant, ['lost-1', 'lost-2']);
    // A proxy in front of the service that passes the first cancel through but answers it 503, as a
    // load balancer whose upstream answer was cut off would.
    const seen: Array<{ key: string | undefined; jobId: string | null }> = [];
    const proxy = createServer((incoming, outgoing) => {
      const upstream = new URL(api.baseUrl);
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: incoming.url,
          method: incoming.method,
          headers: incoming.headers as IncomingHttpHeaders,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => {
            const key = incoming.headers['idempotency-key'] as string | undefined;
            const first = key !== undefined && seen.every((entry) => entry.key !== key);
            seen.push({ key, jobId: (answer.headers['x-job-id'] as string | undefined) ?? null });
            if (first) {
              outgoing.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
              outgoing.end('{"errorCode":11,"errorMessage":"Service temporarily unavailable"}');
              return;
            }
            outgoing.writeHead(answer.statusCode ?? 500, answer.headers);
            outgoing.end(Buffer.concat(chunks));
          });
        },
      );
      incoming.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const client = clientFor(merchant, { baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
      const jobIds = await client.bulkCancel({ externalIds: ['lost-1', 'lost-2'] });
      expect(seen).toHaveLength(2);
      expect(seen[0]?.key).toBeDefined();
      expect(seen[1]?.key).toBe(seen[0]?.key);
      expect(jobIds).toEqual([seen[0]?.jobId]);
      expect((await client.waitForJob(jobIds[0] as string)).result).toMatchObject({ requested: 2, cancelled: 2 });
      expect(await jobRowsOf(merchant.id)).toBe(1);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});

describe('webhooks', () => {
  it('verifies deliveries signed before and after a change of secret with both secrets, and nothing else', async () => {
    const merchant = await createMerchant(env.db);
    await withRewards(merchant, ['hook-1', 'hook-2']);
    const client = clientFor(merchant);
    const setWebhook = async () => {
      const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.url}/client/${merchant.id}`, events: ['job.completed'] }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { secret: string }).secret;
    };
    const delivery = (jobId: string) =>
      eventually(
        async () =>
          receiver.received.find((request) => request.body.includes(jobId) && request.path.includes(merchant.id)),
        { what: `webhook of ${jobId}` },
      );

    const oldSecret = await setWebhook();
    const first = await delivery(await client.cancel({ externalId: 'hook-1' }));
    const newSecret = await setWebhook();
    const second = await delivery(await client.cancel({ externalId: 'hook-2' }));

    for (const request of [first, second]) {
      const event = verifyWebhook({ secrets: [newSecret, oldSecret], headers: request.headers, rawBody: request.body });
      expect(event).toMatchObject({ type: 'job.completed', data: { state: 'completed' } });
    }
    expect(verifyWebhook({ secrets: [oldSecret], headers: second.headers, rawBody: second.body })).toBeNull();
    expect(verifyWebhook({ secrets: [newSecret], headers: first.headers, rawBody: first.body })).toBeNull();
    const tampered = second.body.replace('"completed"', '"failed"');
    expect(verifyWebhook({ secrets: [newSecret, oldSecret], headers: second.headers, rawBody: tampered })).toBeNull();
    const later = Date.now() + 10 * 60_000;
    expect(
      verifyWebhook({ secrets: [newSecret], headers: second.headers, rawBody: second.body, now: later }),
    ).toBeNull();
  });
});

describe('webhooks managed through the client', () => {
  it('sets its endpoint, rotates the secret (a delivery verifies with either), sends a test event, lists, redelivers and recovers', async () => {
    const merchant = await createMerchant(env.db);
    await withRewards(merchant, ['self-1']);
    const client = clientFor(merchant, { signatureVersion: 2 });
    expect(await client.getWebhook()).toBeNull();
    const url = `${receiver.url}/ts-self/${merchant.id}`;
    const { secret: first } = await client.putWebhook({ url, events: ['job.completed'] });
    expect(await client.getWebhook()).toMatchObject({ url, events: ['job.completed'], enabled: true });
    const { secret: second, previousSecretExpiresAt } = await client.rotateWebhookSecret();
    expect(previousSecretExpiresAt).toBeGreaterThan(Date.now());

    const jobId = await client.cancel({ externalId: 'self-1' });
    const delivered = await eventually(
      async () =>
        receiver.received.find((request) => request.body.includes(jobId) && request.path === `/ts-self/${merchant.id}`),
      { what: 'job webhook' },
    );
    for (const secret of [first, second]) {
      expect(verifyWebhook({ secrets: [secret], headers: delivered.headers, rawBody: delivered.body })).toMatchObject({
        type: 'job.completed',
      });
    }

    const testId = await client.sendWebhookTestEvent();
    const test = await eventually(async () => receiver.withId(testId)[0], { what: 'test event' });
    expect(verifyWebhook({ secrets: [second], headers: test.headers, rawBody: test.body })).toMatchObject({
      type: 'webhook.test',
    });
    const listed = await eventually(
      async () => {
        const all = [];
        for await (const entry of client.webhookDeliveries({ limit: 1 })) all.push(entry);
        return all.length === 2 && all.every((entry) => entry.state === 'delivered') ? all : undefined;
      },
      { what: 'two delivered' },
    );
    expect(listed.map((entry) => entry.type).sort()).toEqual(['job.completed', 'webhook.test']);
    expect(listed.every((entry) => entry.attempts.length === 1)).toBe(true);

    expect(await client.redeliverWebhookEvent(testId)).toBe(testId);
    await eventually(async () => (receiver.withId(testId).length === 2 ? true : undefined), { what: 'redelivery' });
    expect(await client.recoverWebhookEvents(Date.now() - 60_000)).toMatchObject({ events: 0 });
    expect(await client.deleteWebhook()).toBe(true);
    expect(await client.getWebhook()).toBeNull();
  });
});
describe('job report', () => {
  it('saves the report of a finished bulkCancel to a file, gzip or not, verified, adding up to the job counts', async () => {
    const merchant = await createMerchant(env.db);
    await withRewards(merchant, ['report-a', 'report-b', 'report-c']);
    const client = clientFor(merchant);
    const [jobId] = await client.bulkCancel({ externalIds: ['report-a', 'report-b', 'report-missing'] });
    const status = await client.waitForJob(jobId as string);
    const directory = mkdtempSync(join(tmpdir(), 'ts-client-report-'));
    const files: string[] = [];
    for (const gzip of [true, false]) {
      const path = join(directory, `report-${gzip}.ndjson`);
      const summary = await client.downloadReport(jobId as string, path, { gzip });
      expect(summary).toMatchObject({ jobId, lines: 3, cancelled: 2, notFound: 1, result: status.result });
      files.push(readFileSync(path, 'utf8'));
    }
    expect(files[0]).toBe(files[1]);
    const lines = (files[0] as string)
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(
      lines
        .slice(0, -1)
        .map((line) => [line.externalId, line.outcome])
        .sort(),
    ).toEqual([
      ['report-a', 'cancelled'],
      ['report-b', 'cancelled'],
      ['report-missing', 'notFound'],
    ]);
  });
});
