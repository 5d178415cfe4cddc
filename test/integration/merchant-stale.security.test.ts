import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MerchantDirectory } from '../../src/api/auth/merchant-directory.js';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { serverOf, startTcpProxy, type TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

// While Postgres is away, a merchant's last known record keeps its cancels (which need only Redis)
// working, but only for MERCHANT_STALE_MAX_MS after it was read: a merchant disabled or a secret
// rotated meanwhile cannot keep working for the whole outage.

const TTL_MS = 100;
const STALE_MAX_MS = 1_500;

const { env, api } = useTestContext({
  settings: {
    MERCHANT_CACHE_TTL_MS: String(TTL_MS),
    MERCHANT_STALE_MAX_MS: String(STALE_MAX_MS),
  },
  api: true,
});
let proxy: TcpProxy;
let proxiedDb: Db;
let merchant: MerchantFixture;

beforeAll(async () => {
  proxy = await startTcpProxy(serverOf(env.databaseUrl));
  proxiedDb = createDb({
    connectionString: throughProxy(env.databaseUrl, proxy),
    poolSize: 2,
    applicationName: 'rewards-test-stale',
    connectTimeoutMs: 300,
  });
  // The merchant records are read through the proxy, so that the test can take Postgres away from them.
  api.deps.merchants = new MerchantDirectory(proxiedDb, api.deps.secrets, {
    ttlMs: TTL_MS,
    maxEntries: 100,
    maxBytes: 1_000_000,
    staleMaxMs: STALE_MAX_MS,
  });
  merchant = await createMerchant(env.db);
});
afterAll(async () => {
  await proxiedDb?.destroy().catch(() => {});
  await proxy?.close();
});

const cancel = (externalId: string) => api.post(cancelPaths.cancel, signedBody(merchant, { externalId }));

describe('a merchant record during a Postgres outage', () => {
  it('is served while younger than MERCHANT_STALE_MAX_MS, then the merchant answers 503', async () => {
    // The record is read somewhere between these two instants.
    const readAfter = Date.now();
    expect((await cancel('before-outage')).status).toBe(200);
    const readBefore = Date.now();
    await proxy.refuse();
    proxy.cut();

    // Past the cache TTL, so each request tries Postgres, fails, and falls back to the last known record.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS * 2));
    const during = await cancel('during-outage');
    expect(during.status).toBe(200);
    expect(Date.now() - readBefore).toBeLessThan(STALE_MAX_MS);

    const refused = await eventually(
      async () => {
        const response = await cancel('after-stale-max');
        return response.status === 200 ? undefined : response;
      },
      { timeoutMs: STALE_MAX_MS * 4, what: 'the last known record to age out' },
    );
    expect(Date.now() - readAfter).toBeGreaterThanOrEqual(STALE_MAX_MS);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ errorCode: 11 });

    await proxy.restore();
    await eventually(async () => ((await cancel('after-outage')).status === 200 ? true : undefined), {
      timeoutMs: 10_000,
      what: 'Postgres to answer again',
    });
  });
});
