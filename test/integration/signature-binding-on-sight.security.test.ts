import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitKey } from '../../src/shared/redis/redis-keys.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, createSession } from '../helpers/fixtures.js';
import { type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// A version-1 triple in a GET /betSlip URL is bound as soon as its signature holds, whatever that
// request is answered (403, 429, a timestamp not yet in its window): the URL is logged all the same.
// And a bound triple is refused before the allow-list and the rate limit: a replay costs no budget.

/** Short, so that a timestamp ahead of the window enters it within the test. */
const WINDOW_MS = 8_000;
const READ_ALL = '/api/v1/integration/reward-configurations/readAll';

const { env } = useTestContext({ settings: { SIGNATURE_WINDOW_MS: String(WINDOW_MS) } });
let api: TestApi;

beforeAll(async () => {
  // Behind a "load balancer" at 127.0.0.1, so that a test can choose the source the allow-list judges.
  api = await startTestApi(env, { config: { ...env.config, TRUST_PROXY: ['127.0.0.1'] } });
});
afterAll(async () => {
  await api?.close();
});

/** A GET /betSlip as the merchant's server builds it: the signed triple in its query string. */
async function betSlipUrl(merchant: MerchantCredentials, timestamp = Date.now()) {
  const session = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
  const fields = signedBody(merchant, { authToken: session.token }, timestamp);
  const query = new URLSearchParams(Object.entries(fields).map(([key, value]): [string, string] => [key, `${value}`]));
  const triple = { merchantId: merchant.id, timestamp: fields.timestamp, hash: fields.hash as string };
  return { url: `/betSlip?${query}`, triple };
}

async function expectUnsigned(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('x-job-id')).toBeNull();
  expect(await response.json()).toMatchObject({ errorCode: 2 });
}

/** Exhausts the merchant's current rate window (a minute long, so the test does not race it). */
async function exhaustRate(merchantId: string, limit: number): Promise<void> {
  await api.deps.redis.set(rateLimitKey(env.queuePrefix, merchantId), limit, 'PX', 60_000);
}

/** Opens a fresh rate window for the merchant, as the next second would. */
async function nextRateWindow(merchantId: string, used = 0): Promise<void> {
  await api.deps.redis.set(rateLimitKey(env.queuePrefix, merchantId), used, 'PX', 60_000);
}

describe('a GET /betSlip refused after its signature held', () => {
  it('answered 429 (rate limit) still binds its triple: a cancel signed with it in the next window is 401', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 1 });
    const { url, triple } = await betSlipUrl(merchant);
    await exhaustRate(merchant.id, 1);
    const refused = await api.get(url);
    expect(refused.status).toBe(429);

    await nextRateWindow(merchant.id);
    await expectUnsigned(await api.post(cancelPaths.cancel, { ...triple, externalId: 'after-429' }));
    await expectUnsigned(await api.post(cancelPaths.bulkCancel, { ...triple, externalIds: ['after-429'] }));
  });

  it('answered 403 (source not allowed) still binds its triple: a cancel from an allowed source is 401', async () => {
    const merchant = await createMerchant(env.db, { allowedIps: ['10.0.0.0/8'] });
    const { url, triple } = await betSlipUrl(merchant);
    const refused = await api.get(url, { 'x-forwarded-for': '203.0.113.7' });
    expect(refused.status).toBe(403);

    const forged = await api.post(
      cancelPaths.cancel,
      { ...triple, externalId: 'after-403' },
      { 'x-forwarded-for': '10.1.2.3' },
    );
    await expectUnsigned(forged);
    // The allowed source is served with a fresh signature: the 401 is the binding, not the address.
    const own = await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: 'own' }), {
      'x-forwarded-for': '10.1.2.3',
    });
    expect(own.status).toBe(200);
  });

  it('answered 401 for a timestamp ahead of the window still binds its triple for when it enters it', async () => {
    const merchant = await createMerchant(env.db);
    const signedAt = Date.now() + WINDOW_MS + 1_500;
    const { url, triple } = await betSlipUrl(merchant, signedAt);
    const early = await api.get(url);
    expect(early.status).toBe(401);

    // Wait for the clock to bring the timestamp well inside its window.
    while (Date.now() < signedAt - WINDOW_MS + 1_000) await new Promise((resolve) => setTimeout(resolve, 50));
    await expectUnsigned(await api.post(cancelPaths.cancel, { ...triple, externalId: 'after-early' }));
  });
});

describe('replays of a bound triple', () => {
  it('are refused 401 before the rate limit: six replays cost no budget, the merchant is served after them', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 3 });
    await nextRateWindow(merchant.id);
    const { url, triple } = await betSlipUrl(merchant);
    expect((await api.get(url)).status).toBe(200);

    const replays: Response[] = [];
    for (let i = 0; i < 6; i++) {
      replays.push(await api.post(cancelPaths.bulkCancel, { ...triple, externalIds: [`replay-${i}`] }));
    }
    expect(replays.map((replay) => replay.status)).toEqual([401, 401, 401, 401, 401, 401]);
    // Refused before the limiter was asked: no RateLimit headers.
    expect(replays.map((replay) => replay.headers.get('ratelimit-remaining'))).toEqual(Array(6).fill(null));

    const own = await api.post(READ_ALL, signedBody(merchant));
    expect(own.status).toBe(200);
    // The bet slip took one of three; the replays none.
    expect(own.headers.get('ratelimit-remaining')).toBe('1');
  });

  it('are refused before the allow-list: a bound triple from a source not allowed is 401, not 403', async () => {
    const merchant = await createMerchant(env.db, { allowedIps: ['10.0.0.0/8'] });
    const { url, triple } = await betSlipUrl(merchant);
    expect((await api.get(url, { 'x-forwarded-for': '10.9.9.9' })).status).toBe(200);
    const replay = await api.post(
      cancelPaths.cancel,
      { ...triple, externalId: 'elsewhere' },
      { 'x-forwarded-for': '203.0.113.7' },
    );
    await expectUnsigned(replay);
  });
});
