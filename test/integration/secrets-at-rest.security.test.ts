import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/shared/secrets/key-ring.js';
import { createWebhookNotifier } from '../../src/shared/webhooks/webhook-notifier.js';
import { testKeyRing } from '../helpers/fixtures.js';
import { type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

/**
 * Secrets at rest: what a database backup holds. Merchants and webhooks are made through the admin
 * API as an operator would make them; `pg_dump --data-only` of the database must then hold none of
 * their secrets, while the same secrets still sign requests and webhooks.
 */

const run = promisify(execFile);

const { env, api, worker } = useTestContext({
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

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${api.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const readAll = (merchant: MerchantCredentials) =>
  api.post('/api/v1/integration/reward-configurations/readAll', signedBody(merchant));

async function createMerchant(fields: Record<string, unknown> = {}): Promise<MerchantCredentials> {
  const response = await admin('POST', '/admin/v1/merchants', { name: 'Sealed', ...fields });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { id: string; secretKey: string };
  return { id: body.id, secretKey: body.secretKey };
}

async function putWebhook(merchantId: string): Promise<string> {
  const response = await admin('PUT', `/admin/v1/merchants/${merchantId}/webhook`, {
    url: `${receiver.url}/hooks/${merchantId}`,
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { secret: string }).secret;
}

function pgDumpBinary(): string {
  const packaged = '/usr/lib/postgresql/15/bin/pg_dump';
  return existsSync(packaged) ? packaged : 'pg_dump';
}

describe('secrets at rest', () => {
  it('leaves no merchant, previous or webhook secret readable in pg_dump --data-only, and they still sign', async () => {
    const generated = await createMerchant();
    const given = await createMerchant({ secretKey: `given-${randomBytes(24).toString('hex')}` });
    const rotation = await admin('POST', `/admin/v1/merchants/${given.id}/secret-rotations`, {
      previousValidForMs: 60 * 60 * 1000,
    });
    expect(rotation.status).toBe(201);
    const rotated = { id: given.id, secretKey: ((await rotation.json()) as { secretKey: string }).secretKey };
    const webhookSecrets = [await putWebhook(generated.id), await putWebhook(given.id)];

    const { stdout: dump } = await run(pgDumpBinary(), ['--data-only', '--dbname', env.databaseUrl], {
      maxBuffer: 64 * 1024 * 1024,
    });
    // The dump is of this database: it holds the merchants (their ids), sealed values under the run's key.
    expect(dump).toContain(generated.id);
    expect(dump).toContain(given.id);
    expect(dump).toMatch(/v2\.test1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22,}/);
    const plain = [
      generated.secretKey,
      given.secretKey, // now the previous secret, still valid for an hour
      rotated.secretKey,
      ...webhookSecrets,
      // The part of a webhook secret that is the key itself.
      ...webhookSecrets.map((secret) => secret.replace(/^whsec_/, '')),
    ];
    for (const secret of plain) expect(dump).not.toContain(secret);

    // The same secrets still sign: requests, the previous secret within its time, and webhooks.
    expect((await readAll(generated)).status).toBe(200);
    expect((await readAll(rotated)).status).toBe(200);
    expect((await readAll(given)).status).toBe(200);

    const notifier = createWebhookNotifier({ ...worker.deps, queue: () => worker.deps.queues.webhooks });
    const now = Date.now();
    await notifier.jobFinished({
      merchantId: generated.id,
      type: 'job.completed',
      status: {
        jobId: randomUUID(),
        operation: 'bulkCancel',
        state: 'completed',
        createdAt: now,
        startedAt: now,
        finishedAt: now,
        progress: 100,
        result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
        error: null,
      },
    });
    const delivered = await eventually(
      async () => receiver.received.find((request) => request.path === `/hooks/${generated.id}`),
      { what: 'the webhook delivery' },
    );
    expect(
      new Webhook(webhookSecrets[0] as string).verify(delivered.body, delivered.headers as Record<string, string>),
    ).toMatchObject({ type: 'job.completed' });
  });

  it("does not open a sealed secret copied onto another merchant's row: 500, never a signature that verifies", async () => {
    const victim = await createMerchant();
    const attacker = await createMerchant();
    const victimRow = await env.db
      .selectFrom('merchants')
      .select('secret_key')
      .where('id', '=', victim.id)
      .executeTakeFirstOrThrow();
    await env.db
      .updateTable('merchants')
      .set({ secret_key: victimRow.secret_key })
      .where('id', '=', attacker.id)
      .execute();
    for (const secretKey of [victim.secretKey, attacker.secretKey]) {
      const response = await readAll({ id: attacker.id, secretKey });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ errorCode: 99, errorMessage: 'Internal error' });
    }
    // The victim itself is untouched.
    expect((await readAll(victim)).status).toBe(200);
  });

  it("does not open a merchant's sealed webhook secret moved into its signing-secret column: it never signs", async () => {
    const merchant = await createMerchant();
    const webhookSecret = await putWebhook(merchant.id);
    const { secret } = await env.db
      .selectFrom('merchant_webhooks')
      .select('secret')
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    await env.db.updateTable('merchants').set({ secret_key: secret }).where('id', '=', merchant.id).execute();
    for (const secretKey of [webhookSecret, merchant.secretKey]) {
      const response = await readAll({ id: merchant.id, secretKey });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ errorCode: 99, errorMessage: 'Internal error' });
    }
  });

  it('does not open an old secret moved from the previous-secret column back into the current one', async () => {
    const merchant = await createMerchant();
    const rotation = await admin('POST', `/admin/v1/merchants/${merchant.id}/secret-rotations`, {
      previousValidForMs: 60 * 60 * 1000,
    });
    expect(rotation.status).toBe(201);
    const row = await env.db
      .selectFrom('merchants')
      .select('previous_secret_key')
      .where('id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    await env.db
      .updateTable('merchants')
      .set({
        secret_key: row.previous_secret_key as string,
        previous_secret_key: null,
        previous_secret_valid_until: null,
      })
      .where('id', '=', merchant.id)
      .execute();
    expect((await readAll(merchant)).status).toBe(500);
  });

  it('answers 500 for a merchant whose secret is sealed under a key the ring does not hold, never reading it as plain', async () => {
    const merchant = await createMerchant();
    const elsewhere = new KeyRing([{ kid: 'gone', key: randomBytes(32) }]);
    const sealedElsewhere = elsewhere.seal(merchant.secretKey, merchant.id, 'merchants.secret_key');
    await env.db.updateTable('merchants').set({ secret_key: sealedElsewhere }).where('id', '=', merchant.id).execute();
    const response = await readAll(merchant);
    expect(response.status).toBe(500);
    // Nor does the stored text sign as if it were the secret.
    expect((await readAll({ id: merchant.id, secretKey: sealedElsewhere })).status).toBe(500);
    // Back under the ring's key, the merchant authenticates again.
    await env.db
      .updateTable('merchants')
      .set({ secret_key: testKeyRing().seal(merchant.secretKey, merchant.id, 'merchants.secret_key') })
      .where('id', '=', merchant.id)
      .execute();
    expect((await readAll(merchant)).status).toBe(200);
  });
});
