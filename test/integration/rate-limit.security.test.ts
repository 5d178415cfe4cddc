import { once } from 'node:events';
import { createServer, type Server, Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalTokenBuckets } from '../../src/api/limits/local-token-buckets.js';
import { RateLimiter } from '../../src/api/limits/rate-limiter.js';
import { createRedis, type RedisConnection } from '../../src/shared/redis/redis.js';
import { rateLimitKey } from '../../src/shared/redis/redis-keys.js';
import { ShardLayout } from '../../src/shared/redis/shards.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * The per-merchant request rate: counted in Redis, so every API replica shares one budget; answered
 * with RateLimit-* headers; and counted by the API process itself when Redis cannot count.
 */

const READ_ALL = '/api/v1/integration/reward-configurations/readAll';

/** Two API "replicas": separate processes' worth of dependencies, one Redis and one key prefix. */
const { env, api: replicaA } = useTestContext({ api: true });
let replicaB: TestApi;
let redis: Redis;

beforeAll(async () => {
  replicaB = await startTestApi(env);
  redis = new Redis(env.redisUrl);
});
afterAll(async () => {
  redis?.disconnect();
  await replicaB?.close();
});

const readAll = (api: TestApi, merchant: MerchantFixture) => api.post(READ_ALL, signedBody(merchant));

function rateHeaders(response: Response) {
  return {
    limit: response.headers.get('ratelimit-limit'),
    remaining: response.headers.get('ratelimit-remaining'),
    reset: response.headers.get('ratelimit-reset'),
  };
}

/**
 * The IETF fields (draft-ietf-httpapi-ratelimit-headers-10), read as a client would: each is one
 * structured-field list item, a quoted policy name then `;key=integer` parameters.
 */
function ietfRateFields(response: Response) {
  const item = (
    name: string,
  ): ({ policy: string | undefined } & Record<string, number | string | undefined>) | null => {
    const value = response.headers.get(name);
    if (value === null) return null;
    const match = /^"([a-z0-9_-]+)"((?:;[a-z]+=\d+)+)$/.exec(value);
    if (!match) throw new Error(`${name} is not a structured-field item: ${value}`);
    const parameters: Record<string, number> = Object.fromEntries(
      (match[2] as string)
        .slice(1)
        .split(';')
        .map((pair) => pair.split('=') as [string, string])
        .map(([key, number]) => [key, Number(number)]),
    );
    return { policy: match[1], ...parameters };
  };
  return { policy: item('ratelimit-policy'), rateLimit: item('ratelimit') };
}

/**
 * Opens the merchant's counting window now and makes it last a minute, so that a test can count
 * exactly without racing the one-second window (the limiter only sets an expiry on a new key).
 */
async function holdWindowOpen(merchantId: string): Promise<void> {
  await redis.set(rateLimitKey(env.queuePrefix, merchantId), 0, 'PX', 60_000);
}

async function expectRateLimited(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(await response.json()).toEqual({ errorCode: 7, errorMessage: 'Too many requests' });
}

describe('rate limit per merchant', () => {
  it('serves exactly rateLimitPerSecond requests of a window, then 429 with Retry-After, all with RateLimit headers', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 3 });
    await holdWindowOpen(merchant.id);

    const answers: Response[] = [];
    for (let i = 0; i < 5; i++) answers.push(await readAll(replicaA, merchant));

    expect(answers.map((response) => response.status)).toEqual([200, 200, 200, 429, 429]);
    expect(answers.map((response) => rateHeaders(response).remaining)).toEqual(['2', '1', '0', '0', '0']);
    for (const response of answers) {
      const { limit, reset } = rateHeaders(response);
      expect(limit).toBe('3');
      // Seconds until the window resets: the held window has about a minute left.
      expect(Number(reset)).toBeGreaterThan(50);
      expect(Number(reset)).toBeLessThanOrEqual(60);
      // The same facts in the IETF fields: a quota of 3 per one-second window, and what is left of it.
      const { policy, rateLimit } = ietfRateFields(response);
      expect(policy).toEqual({ policy: 'default', q: 3, w: 1 });
      expect(rateLimit).toEqual({ policy: 'default', r: Number(rateHeaders(response).remaining), t: Number(reset) });
    }
    expect(answers.map((response) => ietfRateFields(response).rateLimit?.r)).toEqual([2, 1, 0, 0, 0]);
    for (const refused of answers.slice(3)) {
      expect(refused.headers.get('retry-after')).toBe(refused.headers.get('ratelimit-reset'));
      expect(refused.headers.get('x-request-id')).toBeTruthy();
      await expectRateLimited(refused);
    }
  });

  it('limits a real burst within one second, and serves again once the window has passed', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 2 });
    const burst = await Promise.all(Array.from({ length: 10 }, () => readAll(replicaA, merchant)));
    const refused = burst.filter((response) => response.status === 429);
    // Ten requests at 2 a second cannot all pass unless they spread over five seconds.
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const response of refused) {
      expect(Number(response.headers.get('retry-after'))).toBe(1);
      await expectRateLimited(response);
    }
    // The window is one second long: the merchant is served again within a few.
    const deadline = Date.now() + 5_000;
    let served = await readAll(replicaA, merchant);
    while (served.status === 429 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      served = await readAll(replicaA, merchant);
    }
    expect(served.status).toBe(200);
  });

  it('shares one budget between API replicas: their combined count is limited', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 4 });
    await holdWindowOpen(merchant.id);

    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await readAll(replicaA, merchant)).status);
      statuses.push((await readAll(replicaB, merchant)).status);
    }
    // Counted per process, each replica would have served 4 of its own 4.
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
  });

  it('sends RateLimit-Policy and RateLimit on every merchant answer, refusals after authentication included', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 50 });
    const answers = [
      await readAll(replicaA, merchant),
      // Unknown job: 404 after the signature held.
      await replicaA.post(
        '/api/v1/integration/jobs/status',
        signedBody(merchant, { jobId: '00000000-0000-4000-8000-000000000000' }),
      ),
      // A malformed body: 400, validated after the signature.
      await replicaA.post('/api/v1/integration/rewards/cancel', signedBody(merchant, { id: 'not-a-uuid' })),
    ];
    expect(answers.map((response) => response.status)).toEqual([200, 404, 400]);
    for (const response of answers) {
      const { policy, rateLimit } = ietfRateFields(response);
      expect(policy).toEqual({ policy: 'default', q: 50, w: 1 });
      expect(rateLimit?.policy).toBe('default');
      expect(rateLimit?.r).toBeLessThan(50);
      expect(rateLimit?.t).toBeGreaterThanOrEqual(1);
    }
  });

  it('counts a merchant whatever the case of its id, and leaves other merchants alone', async () => {
    const busy = await createMerchant(env.db, { rateLimitPerSecond: 1 });
    const quiet = await createMerchant(env.db, { rateLimitPerSecond: 1 });
    await holdWindowOpen(busy.id);
    expect((await readAll(replicaA, busy)).status).toBe(200);
    await expectRateLimited(await readAll(replicaB, { ...busy, id: busy.id.toUpperCase() }));
    expect((await readAll(replicaA, quiet)).status).toBe(200);
  });

  it('sends no RateLimit headers to a merchant without a limit of its own when the default is 0', async () => {
    const unlimited = await createMerchant(env.db);
    const api = await startTestApi(env, { config: { ...env.config, RATE_LIMIT_PER_SECOND: 0 } });
    try {
      const response = await readAll(api, unlimited);
      expect(response.status).toBe(200);
      expect(rateHeaders(response)).toEqual({ limit: null, remaining: null, reset: null });
      expect(ietfRateFields(response)).toEqual({ policy: null, rateLimit: null });
    } finally {
      await api.close();
    }
  });
});

describe('while Redis cannot count, this process counts: never no limit', () => {
  it('counts in a local bucket, with RateLimit headers, while the limiter cannot reach Redis', async () => {
    const deadRedis = createRedis(`redis://127.0.0.1:${await freePort()}`, 'producer', 'rate-limit-down-test');
    const metrics = new Metrics({ collectDefaults: false, processName: 'api' });
    const api = await startTestApi(env, {
      rateLimiter: limiterOn(deadRedis, env.config.RATE_LIMIT_TIMEOUT_MS, metrics),
    });
    try {
      const merchant = await createMerchant(env.db, { rateLimitPerSecond: 1 });
      const answers = await Promise.all(Array.from({ length: 5 }, () => readAll(api, merchant)));
      // One token in the bucket, refilled at one a second: one request served, the others refused.
      expect(answers.map((response) => response.status).sort()).toEqual([200, 429, 429, 429, 429]);
      for (const response of answers) {
        expect(rateHeaders(response)).toEqual({ limit: '1', remaining: '0', reset: '1' });
        if (response.status === 429) {
          expect(response.headers.get('retry-after')).toBe('1');
          await expectRateLimited(response);
        }
      }
      expect(await fallbackCount(metrics)).toBe(5);
    } finally {
      await api.close();
      deadRedis.disconnect();
    }
  });

  it('gives up on a Redis that stops answering after RATE_LIMIT_TIMEOUT_MS, answers within 2 s, still limited', async () => {
    const proxy = await startFreezableProxy(env.redisUrl);
    const proxiedRedis = createRedis(`redis://127.0.0.1:${proxy.port}`, 'producer', 'rate-limit-stall-test');
    await once(proxiedRedis, 'ready');
    const metrics = new Metrics({ collectDefaults: false, processName: 'api' });
    const api = await startTestApi(env, { rateLimiter: limiterOn(proxiedRedis, 100, metrics) });
    try {
      const merchant = await createMerchant(env.db, { rateLimitPerSecond: 1 });
      await holdWindowOpen(merchant.id);
      expect((await readAll(api, merchant)).status).toBe(200);
      await expectRateLimited(await readAll(api, merchant));
      expect(await fallbackCount(metrics)).toBe(0);

      // Redis still holds the connection but answers nothing. This process's bucket knows nothing of
      // what Redis counted (it starts full: one request), and then refuses.
      proxy.freeze();
      const started = Date.now();
      const [first, second] = await Promise.all([readAll(api, merchant), readAll(api, merchant)]);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect([first?.status, second?.status].sort()).toEqual([200, 429]);
      expect(await fallbackCount(metrics)).toBe(2);
    } finally {
      await api.close();
      proxiedRedis.disconnect();
      await proxy.close();
    }
  });
});

function limiterOn(redisConnection: RedisConnection, timeoutMs: number, metrics: Metrics): RateLimiter {
  return new RateLimiter({
    redis: redisConnection,
    layout: new ShardLayout(env.config),
    timeoutMs,
    fallback: new LocalTokenBuckets({ maxMerchants: 100 }),
    fallbackCounter: metrics.rateLimitFallback,
    logger: createLogger({ level: 'silent', name: 'test' }),
  });
}

async function fallbackCount(metrics: Metrics): Promise<number> {
  const { values } = await metrics.rateLimitFallback.get();
  return values.reduce((sum, { value }) => sum + value, 0);
}

/** A TCP proxy to Redis that can be frozen: connections stay open, nothing more passes. */
async function startFreezableProxy(redisUrl: string) {
  const target = new URL(redisUrl);
  const sockets = new Set<Socket>();
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (!frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!frozen) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      frozen = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
