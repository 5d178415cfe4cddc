import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseKeyRing } from '../../src/shared/secrets/key-ring-text.js';
import { findWebhook } from '../../src/shared/webhooks/webhooks.repository.js';
import { resealSecrets } from '../../src/tools/reseal-secrets.js';
import { createMerchant, testKeyRing } from '../helpers/fixtures.js';
import { sealInFormerForm } from '../helpers/former-sealed-form.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Values sealed before the column was part of the associated data (form `v1`, the merchant only) keep
 * opening until `npm run secrets:reseal` rewrites them in the current form (`v2`, merchant and
 * column), under the same key too.
 */

const { env, api } = useTestContext({ api: true });

describe('npm run secrets:reseal and the former sealed form', () => {
  it('rewrites merchant-only values bound to their column, and they keep signing before and after', async () => {
    const parsed = parseKeyRing(env.secretsKeys);
    if (!parsed.ok) throw new Error(parsed.reason);
    const [runKey] = parsed.keys;
    if (!runKey) throw new Error('the run has no key');
    const ring = testKeyRing();

    const merchant = await createMerchant(env.db);
    const previousSecret = randomBytes(32).toString('hex');
    const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;
    await env.db
      .updateTable('merchants')
      .set({
        secret_key: sealInFormerForm(runKey, merchant.secretKey, merchant.id),
        previous_secret_key: sealInFormerForm(runKey, previousSecret, merchant.id),
        previous_secret_valid_until: new Date(Date.now() + 60 * 60 * 1000),
      })
      .where('id', '=', merchant.id)
      .execute();
    await env.db
      .insertInto('merchant_webhooks')
      .values({
        merchant_id: merchant.id,
        url: 'https://merchant.example/hooks',
        events: ['job.completed'],
        secret: sealInFormerForm(runKey, webhookSecret, merchant.id),
      })
      .execute();

    const readAll = (secretKey: string) =>
      api.post('/api/v1/integration/reward-configurations/readAll', signedBody({ id: merchant.id, secretKey }));
    // Before the reseal: the former form still opens.
    expect((await readAll(merchant.secretKey)).status).toBe(200);
    expect((await readAll(previousSecret)).status).toBe(200);
    expect((await findWebhook(env.db, ring, merchant.id))?.secret).toBe(webhookSecret);

    const report = await resealSecrets(env.db, ring);
    expect(report).toEqual({
      merchants: { scanned: 1, resealed: 2, plainSealed: 0, previousCleared: 0 },
      webhooks: { scanned: 1, resealed: 1, plainSealed: 0 },
    });

    const row = await env.db
      .selectFrom('merchants')
      .select(['secret_key', 'previous_secret_key'])
      .where('id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    const webhook = await env.db
      .selectFrom('merchant_webhooks')
      .select('secret')
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    const currentForm = `v2.${runKey.kid}.`;
    expect(row.secret_key.startsWith(currentForm)).toBe(true);
    expect(row.previous_secret_key?.startsWith(currentForm)).toBe(true);
    expect(webhook.secret.startsWith(currentForm)).toBe(true);
    expect(ring.open(row.secret_key, merchant.id, 'merchants.secret_key')).toBe(merchant.secretKey);
    expect(ring.open(row.previous_secret_key as string, merchant.id, 'merchants.previous_secret_key')).toBe(
      previousSecret,
    );
    expect(ring.open(webhook.secret, merchant.id, 'merchant_webhooks.secret')).toBe(webhookSecret);
    // Now bound: the webhook secret moved into the signing-secret column no longer opens there.
    expect(() => ring.open(webhook.secret, merchant.id, 'merchants.secret_key')).toThrow();

    // After the reseal: the same secrets sign, and a second run has nothing left to rewrite.
    expect((await readAll(merchant.secretKey)).status).toBe(200);
    expect((await readAll(previousSecret)).status).toBe(200);
    expect((await findWebhook(env.db, ring, merchant.id))?.secret).toBe(webhookSecret);
    expect(await resealSecrets(env.db, ring)).toEqual({
      merchants: { scanned: 1, resealed: 0, plainSealed: 0, previousCleared: 0 },
      webhooks: { scanned: 1, resealed: 0, plainSealed: 0 },
    });
  });
});
