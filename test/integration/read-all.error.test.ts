import { beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/** docs/design.md §7: wrong filter or paging values are 400 INVALID_REQUEST naming the field. */

const READ_ALL = '/api/v1/integration/reward-configurations/readAll';

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  await createConfiguration(env.db, { merchantId: merchant.id, name: 'Some configuration', startDate: Date.now() });
});

describe('invalid filters and paging', () => {
  it.each([
    ['status', 'BOGUS'],
    ['status', 'active'],
    ['status', ''],
    ['status', 1],
    ['status', ['ACTIVE']],
    ['rewardType', 'CASH'],
    ['rewardType', 'free_bet'],
    ['rewardType', ''],
    ['name', 42],
    ['name', ['Some']],
    ['name', { contains: 'Some' }],
    ['name', 'x'.repeat(256)],
    ['name', 'Some\u0000configuration'],
    ['limit', 0],
    ['limit', 1_001],
    ['limit', -1],
    ['limit', 1.5],
    ['limit', '10'],
    ['offset', -1],
    ['offset', 0.5],
    ['offset', '0'],
  ])('answers 400 INVALID_REQUEST naming %s when it is %j', async (field, value) => {
    const response = await api.post(READ_ALL, signedBody(merchant, { [field]: value }));
    expect(response.status).toBe(400);
    expect(response.headers.get('x-total-count')).toBeNull();
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['errorCode', 'errorMessage']);
    expect(body.errorCode).toBe(1);
    expect(body.errorMessage).toMatch(new RegExp(`^${field}\\b`));
  });

  it('does not echo the rejected value', async () => {
    const response = await api.post(READ_ALL, signedBody(merchant, { status: 'SUSPICIOUS_VALUE_123' }));
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain('SUSPICIOUS_VALUE_123');
  });
});
