import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, createSession, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// Redis cannot say whether a v1 signature was seen in a URL: the reads and GET /betSlip still answer
// (they change nothing, and the bet slip must survive a Redis outage); the cancels answer 503.

const { env, api } = useTestContext({
  settings: { RATE_LIMIT_TIMEOUT_MS: '50', ENQUEUE_TIMEOUT_MS: '300' },
  // Nothing listens on port 1: every Redis command of this API fails.
  api: { options: { redisUrl: 'redis://127.0.0.1:1', waitForRedis: false } },
});
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

describe('the URL signature check with Redis unreachable', () => {
  it('lets GET /betSlip and readAll answer', async () => {
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
    const fields = signedBody(merchant, { authToken: session.token });
    const query = new URLSearchParams(
      Object.entries(fields).map(([key, value]): [string, string] => [key, `${value}`]),
    );
    const betSlip = await api.get(`/betSlip?${query}`);
    expect(betSlip.status).toBe(200);
    expect(await betSlip.json()).toMatchObject({ errorCode: 0 });
    const readAll = await api.post('/api/v1/integration/reward-configurations/readAll', signedBody(merchant));
    expect(readAll.status).toBe(200);
  });

  it('answers a cancel 503 errorCode 11 with Retry-After, in time', async () => {
    const started = Date.now();
    const response = await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: 'no-redis' }));
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ errorCode: 11 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
