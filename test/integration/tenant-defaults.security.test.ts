import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MerchantDirectory } from '../../src/api/auth/merchant-directory.js';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { rateLimitKey } from '../../src/shared/redis/redis-keys.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant, type MerchantFixture, testKeyRing } from '../helpers/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { monitorRedis } from '../helpers/redis-monitor.js';
import { type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * What every merchant gets without an operator doing anything (docs/design.md §10): a default rate
 * limit (RATE_LIMIT_PER_SECOND, 5 here instead of 1,000) that the API process keeps counting itself
 * while Redis cannot; a 16 KiB body limit enforced before anything looks at who is asking (bulk routes
 * excepted); and request and headers timeouts on the HTTP server.
 */

const DEFAULT_LIMIT = 5;
const SMALL_LIMIT = 16 * 1024;
const READ_ALL = '/api/v1/integration/reward-configurations/readAll';
const BULK_CANCEL = '/api/v1/integration/rewards/bulkCancel';

const { env, api } = useTestContext({ settings: { RATE_LIMIT_PER_SECOND: String(DEFAULT_LIMIT) }, api: true });
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(env.redisUrl);
});
afterAll(async () => {
  redis?.disconnect();
});

const readAll = (target: TestApi, merchant: MerchantFixture) => target.post(READ_ALL, signedBody(merchant));

/** Opens the merchant's Redis window now for a minute, so that counts do not race the one-second window. */
async function holdWindowOpen(merchantId: string): Promise<void> {
  await redis.set(rateLimitKey(env.queuePrefix, merchantId), 0, 'PX', 60_000);
}

async function expectError(response: Response, status: number, errorCode: number): Promise<void> {
  expect(response.status).toBe(status);
  expect(((await response.json()) as { errorCode: number }).errorCode).toBe(errorCode);
}

describe('the default rate limit', () => {
  it('applies RATE_LIMIT_PER_SECOND to a merchant without a limit of its own: the 6th of 5 is a 429', async () => {
    const merchant = await createMerchant(env.db);
    await holdWindowOpen(merchant.id);
    const answers: Response[] = [];
    for (let i = 0; i < DEFAULT_LIMIT + 1; i++) answers.push(await readAll(api, merchant));
    expect(answers.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 429]);
    for (const response of answers) expect(response.headers.get('ratelimit-limit')).toBe(String(DEFAULT_LIMIT));
    const refused = answers.at(-1) as Response;
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('retry-after')).toBe(refused.headers.get('ratelimit-reset'));
    await expectError(refused, 429, 7);
  });

  it("lets a merchant's own limit win over the default, higher or lower", async () => {
    const generous = await createMerchant(env.db, { rateLimitPerSecond: 20 });
    const strict = await createMerchant(env.db, { rateLimitPerSecond: 2 });
    await holdWindowOpen(generous.id);
    await holdWindowOpen(strict.id);
    const generousStatuses: number[] = [];
    for (let i = 0; i < DEFAULT_LIMIT + 3; i++) generousStatuses.push((await readAll(api, generous)).status);
    expect(generousStatuses.every((status) => status === 200)).toBe(true);
    const strictStatuses: number[] = [];
    for (let i = 0; i < 3; i++) strictStatuses.push((await readAll(api, strict)).status);
    expect(strictStatuses).toEqual([200, 200, 429]);
  });

  it('is off with RATE_LIMIT_PER_SECOND=0: no 429, no RateLimit headers, nothing counted in Redis', async () => {
    const unlimitedApi = await startTestApi(env, { config: { ...env.config, RATE_LIMIT_PER_SECOND: 0 } });
    try {
      const merchant = await createMerchant(env.db);
      const answers = await Promise.all(
        Array.from({ length: 3 * DEFAULT_LIMIT }, () => readAll(unlimitedApi, merchant)),
      );
      expect(answers.map((response) => response.status)).toEqual(answers.map(() => 200));
      for (const response of answers) expect(response.headers.get('ratelimit-limit')).toBeNull();
      expect(await redis.exists(rateLimitKey(env.queuePrefix, merchant.id))).toBe(0);
    } finally {
      await unlimitedApi.close();
    }
  });
});

describe('the default rate limit while Redis is paused (CLIENT PAUSE)', { timeout: 30_000 }, () => {
  let server: RedisServer;
  let pausedApi: TestApi;
  let control: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    pausedApi = await startTestApi(env, {}, { redisUrl: server.url });
    control = new Redis(server.url);
  });
  afterAll(async () => {
    await control?.call('CLIENT', 'UNPAUSE').catch(() => {});
    control?.disconnect();
    await pausedApi?.close();
    await server?.stop();
  });

  const fallbackCount = async () => {
    const { values } = await pausedApi.deps.metrics.rateLimitFallback.get();
    return values.reduce((sum, { value }) => sum + value, 0);
  };

  it('counts in the process: a burst over the limit gets 429s with headers, a request under it gets through', async () => {
    const merchant = await createMerchant(env.db);
    expect((await readAll(pausedApi, merchant)).status).toBe(200);
    expect(await fallbackCount()).toBe(0);

    await control.call('CLIENT', 'PAUSE', '5000', 'ALL');
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 4 * DEFAULT_LIMIT }, () => readAll(pausedApi, merchant)));
    const burstSeconds = (Date.now() - started) / 1_000;

    // Nobody waited for the pause to end, and nobody went unlimited: at most the bucket (5) plus what it
    // refilled (5 a second) while the burst lasted.
    expect(burstSeconds).toBeLessThan(4);
    const served = burst.filter((response) => response.status === 200);
    const refused = burst.filter((response) => response.status === 429);
    expect(served.length + refused.length).toBe(burst.length);
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length).toBeLessThanOrEqual(DEFAULT_LIMIT + Math.ceil(burstSeconds * DEFAULT_LIMIT));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const response of burst) expect(response.headers.get('ratelimit-limit')).toBe(String(DEFAULT_LIMIT));
    for (const response of refused) {
      expect(response.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await expectError(response, 429, 7);
    }
    expect(await fallbackCount()).toBe(burst.length);

    // Still paused: a second later the bucket has refilled, and a request under the limit is served.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const later = await readAll(pausedApi, merchant);
    expect(later.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await fallbackCount()).toBe(burst.length + 1);
  });
});

describe('the body limit before authentication', { timeout: 30_000 }, () => {
  /** 100 KiB of JSON, shaped like a signed readAll request. */
  const largeBody = (merchantId: string) =>
    JSON.stringify({ merchantId, timestamp: Date.now(), hash: '0'.repeat(64), padding: 'x'.repeat(100 * 1024) });

  it('answers 413 errorCode 5 to a 100 KiB readAll before any Redis command or database query', async () => {
    const server = await startRedisServer();
    // A database that refuses every connection: had the request reached the merchant lookup, it would be a 503.
    const deadDb: Db = createDb({
      connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/nothing`,
      poolSize: 1,
      applicationName: 'tenant-defaults-dead-db',
      connectTimeoutMs: 500,
    });
    const isolated = await startTestApi(
      env,
      {
        db: deadDb,
        merchants: new MerchantDirectory(deadDb, testKeyRing(), { ttlMs: 0, maxEntries: 10, maxBytes: 1_000_000 }),
      },
      { redisUrl: server.url },
    );
    // BullMQ writes each queue's meta hash once the connection is up: let that settle before watching.
    const metaKeys: string[] = isolated.deps.producer.queues.listed().map(({ queue }) => queue.keys.meta as string);
    const watcher = new Redis(server.url);
    for (const deadline = Date.now() + 5_000; (await watcher.exists(metaKeys)) < metaKeys.length; ) {
      if (Date.now() > deadline) throw new Error('queue meta never written');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    watcher.disconnect();
    const monitor = await monitorRedis(server.url);
    /** Every command Redis ran since the monitor started, up to a marker of ours (MONITOR trails commands). */
    const commandsUntilMarker = async (marker: string) => {
      const client = new Redis(server.url);
      await client.exists(marker);
      client.disconnect();
      await waitFor(() => monitor.commands.some((command) => command[1] === marker));
      const names = monitor.commands.map((command) => command[0]?.toUpperCase() ?? '');
      return names.slice(
        0,
        monitor.commands.findIndex((command) => command[1] === marker),
      );
    };
    try {
      // No such merchant, and a hash that signs nothing: 413, not 401. Authentication did not run.
      await expectError(await isolated.post(READ_ALL, largeBody(randomUUID())), 413, 5);
      // Nothing reached Redis (a client's connection handshake aside).
      const duringLarge = await commandsUntilMarker('marker-after-the-large-body');
      expect(duringLarge.filter((name) => !HANDSHAKE.has(name))).toEqual([]);

      // The controls: a small body goes on to the merchant lookup (the dead database: 503)…
      await expectError(
        await isolated.post(READ_ALL, JSON.stringify(signedBody(await createMerchant(env.db)))),
        503,
        11,
      );
      // …and MONITOR does see the commands a request sends (the rate limit's, once the database answers).
      const live = await startTestApi(env, {}, { redisUrl: server.url });
      try {
        expect((await readAll(live, await createMerchant(env.db))).status).toBe(200);
      } finally {
        await live.close();
      }
      const all = await commandsUntilMarker('marker-after-the-controls');
      expect(all.some((name) => name === 'EVALSHA' || name === 'EVAL')).toBe(true);
    } finally {
      monitor.stop();
      await isolated.close();
      await deadDb.destroy();
      await server.stop();
    }
  });

  it('refuses a Content-Length over 16 KiB before a byte of the body is sent', async () => {
    const socket = await openSocket(api);
    const body = largeBody(randomUUID());
    socket.write(
      `POST ${READ_ALL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    const answer = await readUntil(socket, '\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    socket.destroy();
  });

  it('counts a chunked body as it arrives: 413 once it passes 16 KiB', async () => {
    const socket = await openSocket(api);
    socket.write(
      `POST ${READ_ALL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'y'.repeat(4 * 1024);
    // Five chunks of 4 KiB, never a last chunk: the answer comes once the fifth passes the limit.
    for (let i = 0; i < 5; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const answer = await readUntil(socket, '\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    socket.destroy();
  });

  it('accepts exactly SMALL_BODY_LIMIT_BYTES on readAll, and more on bulkCancel (up to BODY_LIMIT_BYTES)', async () => {
    const merchant = await createMerchant(env.db, { rateLimitPerSecond: 100 });
    const padded = (fields: Record<string, unknown>, bytes: number) => {
      const compact = JSON.stringify(signedBody(merchant, fields));
      return `${compact.slice(0, -1)}${' '.repeat(bytes - Buffer.byteLength(compact))}}`;
    };
    expect((await api.post(READ_ALL, padded({}, SMALL_LIMIT))).status).toBe(200);
    await expectError(await api.post(READ_ALL, padded({}, SMALL_LIMIT + 1)), 413, 5);
    const externalIds = Array.from({ length: 3_000 }, (_, i) => `tenant-defaults-${i}-${randomUUID()}`);
    const bulk = JSON.stringify(signedBody(merchant, { externalIds }));
    expect(Buffer.byteLength(bulk)).toBeGreaterThan(100 * 1024);
    const response = await api.post(BULK_CANCEL, bulk);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-job-id')).toBeTruthy();
  });
});

describe('request and headers timeouts (1 s here, 30 s by default)', { timeout: 30_000 }, () => {
  let slowApi: TestApi;
  beforeAll(async () => {
    slowApi = await startTestApi(env, {
      config: { ...env.config, HTTP_REQUEST_TIMEOUT_MS: 1_000, HTTP_HEADERS_TIMEOUT_MS: 1_000 },
    });
  });
  afterAll(async () => {
    await slowApi?.close();
  });

  it('answers 408 and closes a connection whose body trickles slower than the request timeout', async () => {
    const socket = await openSocket(slowApi);
    const started = Date.now();
    socket.write(
      `POST ${READ_ALL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{`,
    );
    // One byte every 200 ms: the body would take 40 s.
    const trickle = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(' ');
    }, 200);
    try {
      const [answer] = await Promise.all([readUntil(socket, '\r\n\r\n'), once(socket, 'close')]);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      // Closed within the timeout and one check of it, long before the body would have ended.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it('answers 408 and closes a connection whose headers never end', async () => {
    const socket = await openSocket(slowApi);
    socket.write(`POST ${READ_ALL} HTTP/1.1\r\nHost: x\r\n`);
    const trickle = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write('X-Slow: 1\r\n');
    }, 200);
    try {
      const [answer] = await Promise.all([readUntil(socket, '\r\n\r\n'), once(socket, 'close')]);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it('still serves a request sent at a normal pace', async () => {
    expect((await readAll(slowApi, await createMerchant(env.db))).status).toBe(200);
  });
});

/** What a client says to Redis before its first command, which no request of the API sends. */
const HANDSHAKE = new Set(['CLIENT', 'INFO', 'HELLO', 'SELECT', 'PING']);

async function openSocket(target: TestApi): Promise<Socket> {
  const { hostname, port } = new URL(target.baseUrl);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  return socket;
}

/** What the socket receives until `marker` (or its end), as text; rejects after 15 s. */
function readUntil(socket: Socket, marker: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const timer = setTimeout(
      () => reject(new Error(`no '${JSON.stringify(marker)}' within 15 s: ${received}`)),
      15_000,
    );
    const done = () => {
      clearTimeout(timer);
      resolve(received);
    };
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes(marker)) done();
    });
    socket.on('close', done);
    socket.on('error', () => {});
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
