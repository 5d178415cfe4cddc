import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/shared/secrets/key-ring.js';
import { parseKeyRing } from '../../src/shared/secrets/key-ring-text.js';
import { upsertWebhook } from '../../src/shared/webhooks/webhooks.repository.js';
import { type ResealProgress, resealSecrets } from '../../src/tools/reseal-secrets.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant, type MerchantFixture, testKeyRing } from '../helpers/fixtures.js';
import { type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Key rotation as docs/operations.md describes it: a new key is put first in SECRETS_KEYS (the services
 * now seal under it and still open the old one), `npm run secrets:reseal` moves every row to it while
 * merchants keep sending, then the old key can go.
 */

const run = promisify(execFile);
const HOUR_MS = 60 * 60 * 1000;

const newKey = `new1:${randomBytes(32).toString('base64')}`;
const { env } = useTestContext();
let api: TestApi;
/** The ring after the rotation: the new key first, the run's (old) key behind it. */
let rotatedText: string;
let rotated: KeyRing;

beforeAll(async () => {
  rotatedText = `${newKey},${env.secretsKeys}`;
  const parsed = parseKeyRing(rotatedText);
  if (!parsed.ok) throw new Error(parsed.reason);
  rotated = new KeyRing(parsed.keys);
  // The API runs with the rotated ring; the rows below are sealed under the old key, as before the rotation.
  api = await startTestApi({ ...env, config: { ...env.config, SECRETS_KEYS: parsed.keys } });
});
afterAll(async () => {
  await api?.close();
});

const readAll = (merchant: MerchantCredentials) =>
  api.post('/api/v1/integration/reward-configurations/readAll', signedBody(merchant));

interface Seeded {
  merchants: MerchantFixture[];
  /** Merchants whose previous secret is still valid, with that secret. */
  previous: MerchantCredentials[];
  expiredPrevious: MerchantFixture[];
  legacy: MerchantCredentials;
  webhookSecrets: Map<string, string>;
}

async function seed(): Promise<Seeded> {
  const old = testKeyRing();
  const merchants: MerchantFixture[] = [];
  const previous: MerchantCredentials[] = [];
  const expiredPrevious: MerchantFixture[] = [];
  for (let i = 0; i < 36; i++) {
    if (i % 6 === 1) {
      const previousSecret = randomBytes(32).toString('hex');
      const merchant = await createMerchant(env.db, {
        previousSecretKey: previousSecret,
        previousSecretValidUntil: Date.now() + HOUR_MS,
      });
      merchants.push(merchant);
      previous.push({ id: merchant.id, secretKey: previousSecret });
    } else if (i % 6 === 2) {
      const merchant = await createMerchant(env.db, {
        previousSecretKey: randomBytes(32).toString('hex'),
        previousSecretValidUntil: Date.now() - 1_000,
      });
      merchants.push(merchant);
      expiredPrevious.push(merchant);
    } else {
      merchants.push(await createMerchant(env.db));
    }
  }
  // A row from before secrets were sealed: its plain secret in the column.
  const legacyMerchant = await createMerchant(env.db);
  const legacySecret = `legacy-${randomBytes(16).toString('hex')}`;
  await env.db.updateTable('merchants').set({ secret_key: legacySecret }).where('id', '=', legacyMerchant.id).execute();
  const legacy = { id: legacyMerchant.id, secretKey: legacySecret };
  const webhookSecrets = new Map<string, string>();
  for (const merchant of merchants.slice(0, 12)) {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    await upsertWebhook(env.db, old, merchant.id, {
      url: 'https://merchant.example/hooks',
      events: ['job.completed'],
      secret,
    });
    webhookSecrets.set(merchant.id, secret);
  }
  return { merchants, previous, expiredPrevious, legacy, webhookSecrets };
}

describe('npm run secrets:reseal', () => {
  it('moves every row to the new key while signed requests are served, with no 401', async () => {
    const seeded = await seed();
    const everyone: MerchantCredentials[] = [...seeded.merchants, ...seeded.previous, seeded.legacy];
    // Before: the API opens the old key's rows and the plain one.
    for (const merchant of everyone) expect((await readAll(merchant)).status).toBe(200);

    let resealing = true;
    let duringReseal = 0;
    const statuses = new Map<number, number>();
    const load = Array.from({ length: 4 }, async (_, lane) => {
      for (let i = lane; resealing || i < lane + everyone.length; i += 4) {
        const response = await readAll(everyone[i % everyone.length] as MerchantCredentials);
        await response.body?.cancel();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (resealing) duringReseal++;
      }
    });
    const progress: ResealProgress[] = [];
    const report = await resealSecrets(env.db, rotated, { batchSize: 5, onProgress: (step) => progress.push(step) });
    resealing = false;
    await Promise.all(load);

    expect([...statuses.keys()]).toEqual([200]);
    expect(duringReseal).toBeGreaterThan(0);
    // Progress per batch: 37 merchants in 5s is 8 batches, 12 webhooks 3.
    expect(progress.filter((step) => step.table === 'merchants').map((step) => step.scanned)).toEqual([
      5, 10, 15, 20, 25, 30, 35, 37,
    ]);
    expect(progress.filter((step) => step.table === 'merchant_webhooks').at(-1)).toEqual({
      table: 'merchant_webhooks',
      scanned: 12,
      changed: 12,
    });
    expect(report).toEqual({
      merchants: {
        scanned: 37,
        resealed: seeded.merchants.length + seeded.previous.length,
        plainSealed: 1,
        previousCleared: seeded.expiredPrevious.length,
      },
      webhooks: { scanned: 12, resealed: 12, plainSealed: 0 },
    });

    // Every row carries the new kid; expired previous secrets are gone; every value opens to its secret.
    const rows = await env.db
      .selectFrom('merchants')
      .select(['id', 'secret_key', 'previous_secret_key', 'previous_secret_valid_until'])
      .execute();
    expect(rows).toHaveLength(37);
    for (const row of rows) {
      expect(row.secret_key.startsWith('v2.new1.')).toBe(true);
      if (row.previous_secret_key !== null) expect(row.previous_secret_key.startsWith('v2.new1.')).toBe(true);
    }
    for (const merchant of seeded.expiredPrevious) {
      const row = rows.find((candidate) => candidate.id === merchant.id);
      expect(row).toMatchObject({ previous_secret_key: null, previous_secret_valid_until: null });
    }
    for (const merchant of seeded.previous) {
      const row = rows.find((candidate) => candidate.id === merchant.id);
      expect(rotated.open(row?.previous_secret_key as string, merchant.id, 'merchants.previous_secret_key')).toBe(
        merchant.secretKey,
      );
    }
    const legacyRow = rows.find((row) => row.id === seeded.legacy.id);
    expect(rotated.open(legacyRow?.secret_key as string, seeded.legacy.id, 'merchants.secret_key')).toBe(
      seeded.legacy.secretKey,
    );
    const webhooks = await env.db.selectFrom('merchant_webhooks').select(['merchant_id', 'secret']).execute();
    expect(webhooks).toHaveLength(12);
    for (const webhook of webhooks) {
      expect(webhook.secret.startsWith('v2.new1.')).toBe(true);
      expect(rotated.open(webhook.secret, webhook.merchant_id, 'merchant_webhooks.secret')).toBe(
        seeded.webhookSecrets.get(webhook.merchant_id),
      );
    }

    // The old key can now go: a service with the new key alone authenticates everyone.
    const parsed = parseKeyRing(newKey);
    if (!parsed.ok) throw new Error(parsed.reason);
    const newOnly = await startTestApi({ ...env, config: { ...env.config, SECRETS_KEYS: parsed.keys } });
    try {
      for (const merchant of everyone) {
        const response = await newOnly.post('/api/v1/integration/reward-configurations/readAll', signedBody(merchant));
        expect(response.status).toBe(200);
      }
    } finally {
      await newOnly.close();
    }

    // The command itself, as an operator runs it: progress printed, nothing left to rewrite.
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/tools/reseal-secrets.cli.ts'], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        DATABASE_URL: env.databaseUrl,
        REDIS_URL: env.redisUrl,
        SECRETS_KEYS: rotatedText,
      },
    });
    expect(stdout).toContain('resealing every stored secret under key "new1"');
    expect(stdout).toContain('merchants: 37 rows read, 0 rewritten');
    expect(stdout).toContain('merchant_webhooks: 12 rows read, 0 rewritten');
    expect(stdout).toMatch(/done\. merchants: 0 secrets resealed, 0 plain ones sealed, 0 expired previous/);
  });

  it('stops with the kid named when a row is sealed under a key the ring no longer holds', async () => {
    const merchant = await createMerchant(env.db);
    const foreign = new KeyRing([{ kid: 'lost', key: randomBytes(32) }]);
    await env.db
      .updateTable('merchants')
      .set({ secret_key: foreign.seal(merchant.secretKey, merchant.id, 'merchants.secret_key') })
      .where('id', '=', merchant.id)
      .execute();
    await expect(resealSecrets(env.db, rotated)).rejects.toThrow(/key "lost"/);
    // The row is left as it was: never rewritten from a value that did not open.
    const row = await env.db
      .selectFrom('merchants')
      .select('secret_key')
      .where('id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_key.startsWith('v2.lost.')).toBe(true);
  });
});
