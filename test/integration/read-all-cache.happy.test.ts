import { beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

const READ_ALL = '/api/v1/integration/reward-configurations/readAll';
const ADMIN_TOKEN = 'cache-test-admin-token-0123456789abcdef';

const { env, api } = useTestContext({ settings: { READ_CACHE_TTL_MS: '600000', ADMIN_TOKEN }, api: true });
let merchant: MerchantFixture;
let other: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
});

async function names(who: MerchantFixture, fields: Record<string, unknown> = {}) {
  const response = await api.post(READ_ALL, signedBody(who, fields));
  expect(response.status).toBe(200);
  return ((await response.json()) as Array<{ name: string }>).map((configuration) => configuration.name);
}

describe('readAll answer cache', () => {
  it('answers a repeated read from memory, per merchant and per filter set, until an admin write clears it', async () => {
    await createConfiguration(env.db, { merchantId: merchant.id, name: 'First', startDate: 1_000 });
    expect(await names(merchant)).toEqual(['First']);

    // Written behind the API's back: the cached answer stands (for at most READ_CACHE_TTL_MS).
    await createConfiguration(env.db, { merchantId: merchant.id, name: 'Second', startDate: 2_000 });
    expect(await names(merchant)).toEqual(['First']);
    // Another filter set, and another merchant, are other entries.
    expect(await names(merchant, { name: 'second' })).toEqual(['Second']);
    await createConfiguration(env.db, { merchantId: other.id, name: 'Theirs', startDate: 3_000 });
    expect(await names(other)).toEqual(['Theirs']);

    // A configuration created through the admin API clears the merchant's entries at once.
    const created = await api.post(
      `/admin/v1/merchants/${merchant.id}/reward-configurations`,
      {
        name: 'Third',
        status: 'ACTIVE',
        rewardType: 'FREE_BET',
        numberOfFreeBets: 1,
        startDate: 3_000,
        endDate: 4_000,
        duration: 60,
        games: [{ gameId: 1, betConstraints: { EUR: { betAmount: 1, maxWinPerBet: 10 } } }],
      },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(created.status).toBe(201);
    expect(await names(merchant)).toEqual(['Third', 'Second', 'First']);
    expect(await names(other)).toEqual(['Theirs']);
  });
});
