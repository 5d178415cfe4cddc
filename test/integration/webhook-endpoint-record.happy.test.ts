import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/shared/secrets/key-ring.js';
import { parseKeyRing } from '../../src/shared/secrets/key-ring-text.js';
import type { SecretSealer } from '../../src/shared/secrets/secret-sealer.js';
import {
  findWebhook,
  recordEndpointDelivered,
  recordEndpointFailure,
  upsertWebhook,
} from '../../src/shared/webhooks/webhooks.repository.js';
import { resealSecrets } from '../../src/tools/reseal-secrets.js';
import { createMerchant, testKeyRing } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * An attempt's outcome is recorded against the settings it was sent with. A delivery still waiting on
 * the old receiver when the merchant writes new settings (which enable the endpoint with a clean record)
 * must not start the new settings' failing clock, nor clear it. Real Postgres, the repository's statements.
 */

const keys = testKeyRing();
const { env } = useTestContext();

async function webhookOf(merchantId: string, ring: SecretSealer = keys) {
  const webhook = await findWebhook(env.db, ring, merchantId);
  if (!webhook) throw new Error(`merchant ${merchantId} has no webhook`);
  return webhook;
}

async function put(merchantId: string, url: string): Promise<void> {
  await upsertWebhook(env.db, keys, merchantId, { url, events: ['job.completed'], secret: 'whsec_c2VjcmV0' });
}

describe('recording an attempt against the endpoint', () => {
  it('a failure of an attempt sent before new settings leaves them clean; one sent after starts the clock', async () => {
    const merchant = await createMerchant(env.db);
    await put(merchant.id, 'https://old.example/hooks');
    const sentWithOld = (await webhookOf(merchant.id)).settingsVersion;

    await put(merchant.id, 'https://new.example/hooks');
    expect(await recordEndpointFailure(env.db, merchant.id, sentWithOld, 60_000, 'timed out')).toBeUndefined();
    expect((await webhookOf(merchant.id)).failingSince).toBeNull();

    const current = await webhookOf(merchant.id);
    expect(current.settingsVersion).not.toBe(sentWithOld);
    await recordEndpointFailure(env.db, merchant.id, current.settingsVersion, 60_000, 'HTTP 503');
    expect((await webhookOf(merchant.id)).failingSince).toBeInstanceOf(Date);
  });

  it('an attempt sent before new settings does not disable them, however long the old ones failed', async () => {
    const merchant = await createMerchant(env.db);
    await put(merchant.id, 'https://old.example/hooks');
    const sentWithOld = (await webhookOf(merchant.id)).settingsVersion;
    // The old settings had failed for an hour: any failure recorded against them now disables.
    await env.db
      .updateTable('merchant_webhooks')
      .set({ failing_since: new Date(Date.now() - 3_600_000) })
      .where('merchant_id', '=', merchant.id)
      .execute();
    await put(merchant.id, 'https://new.example/hooks');

    expect(await recordEndpointFailure(env.db, merchant.id, sentWithOld, 1_000, 'timed out')).toBeUndefined();
    const after = await webhookOf(merchant.id);
    expect(after).toMatchObject({ disabledAt: null, failingSince: null, url: 'https://new.example/hooks' });

    // Against the settings read now, the same call works as before.
    const before = await webhookOf(merchant.id);
    await env.db
      .updateTable('merchant_webhooks')
      .set({ failing_since: new Date(Date.now() - 3_600_000) })
      .where('merchant_id', '=', merchant.id)
      .execute();
    const disabled = await recordEndpointFailure(env.db, merchant.id, before.settingsVersion, 1_000, 'timed out');
    expect(disabled?.reason).toMatch(/^every delivery failed since .* \(last: timed out\)$/);
  });

  it('a delivery of an attempt sent before new settings does not clear their failing clock', async () => {
    const merchant = await createMerchant(env.db);
    await put(merchant.id, 'https://old.example/hooks');
    const sentWithOld = (await webhookOf(merchant.id)).settingsVersion;
    await put(merchant.id, 'https://new.example/hooks');
    const current = await webhookOf(merchant.id);
    await recordEndpointFailure(env.db, merchant.id, current.settingsVersion, 60_000, 'HTTP 500');
    const failingSince = (await webhookOf(merchant.id)).failingSince;
    expect(failingSince).toBeInstanceOf(Date);

    await recordEndpointDelivered(env.db, merchant.id, sentWithOld);
    expect((await webhookOf(merchant.id)).failingSince).toEqual(failingSince);
    await recordEndpointDelivered(env.db, merchant.id, current.settingsVersion);
    expect((await webhookOf(merchant.id)).failingSince).toBeNull();
  });

  it('resealing the secret under a new key is not new settings', async () => {
    const merchant = await createMerchant(env.db);
    await put(merchant.id, 'https://merchant.example/hooks');
    const before = (await webhookOf(merchant.id)).settingsVersion;
    const parsed = parseKeyRing(`new1:${randomBytes(32).toString('base64')},${env.secretsKeys}`);
    if (!parsed.ok) throw new Error(parsed.reason);
    const rotated = new KeyRing(parsed.keys);
    const report = await resealSecrets(env.db, rotated, { batchSize: 100 });
    expect(report.webhooks.resealed).toBeGreaterThan(0);
    expect((await webhookOf(merchant.id, rotated)).settingsVersion).toBe(before);
    await recordEndpointFailure(env.db, merchant.id, before, 60_000, 'HTTP 502');
    expect((await webhookOf(merchant.id, rotated)).failingSince).toBeInstanceOf(Date);
  });
});
