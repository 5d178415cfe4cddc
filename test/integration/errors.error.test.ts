import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MerchantDirectory } from '../../src/api/auth/merchant-directory.js';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant, createSession, type MerchantFixture, testKeyRing } from '../helpers/fixtures.js';
import { httpRequestsCounted } from '../helpers/read-metrics.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/** docs/design.md §3: every failure has the same body shape, the catalogue's status, and nothing more. */

const BODY_LIMIT = 1024;
const READ_ALL = '/api/v1/integration/reward-configurations/readAll';
const CANCEL = '/api/v1/integration/rewards/cancel';
const BULK_CANCEL = '/api/v1/integration/rewards/bulkCancel';
const BULK_CANCEL_BY_QUERY = '/api/v1/integration/rewards/bulkCancelByQuery';
const JOB_STATUS = '/api/v1/integration/jobs/status';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const { env, api } = useTestContext({ settings: { BODY_LIMIT_BYTES: String(BODY_LIMIT) }, api: true });
let merchant: MerchantFixture;
const secretKey = `errors-secret-${randomBytes(12).toString('hex')}`;

beforeAll(async () => {
  merchant = await createMerchant(env.db, { secretKey });
});

/**
 * Asserts the error answer: status, the two fields and nothing else, a request id, and no stack
 * trace, SQL, connection detail or secret anywhere in the body.
 */
async function expectError(response: Response, status: number, errorCode: number): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-request-id')).toBeTruthy();
  const text = await response.text();
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['errorCode', 'errorMessage']);
  expect(body.errorCode).toBe(errorCode);
  expect(typeof body.errorMessage).toBe('string');
  expect((body.errorMessage as string).length).toBeGreaterThan(0);
  expectNothingLeaked(text);
  return body.errorMessage as string;
}

function expectNothingLeaked(text: string): void {
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+|\.js:\d+|node_modules/);
  expect(text).not.toMatch(/\b(select|insert|update|delete)\b.*\b(from|into|set)\b/i);
  expect(text).not.toMatch(/relation|column|syntax error|ECONNREFUSED|postgres:\/\/|redis:\/\/|127\.0\.0\.1/i);
  expect(text).not.toContain(secretKey);
  expect(text).not.toContain(env.databaseUrl);
}

async function untilReady(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** POST without going through the helper, to control headers and body bytes exactly. */
function rawPost(path: string, body: RequestInit['body'], headers: Record<string, string>, target: TestApi = api) {
  return fetch(`${target.baseUrl}${path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
}

describe('unknown routes', () => {
  it.each([
    ['GET', '/nope'],
    ['POST', '/api/v1/integration/rewards/nope'],
    ['POST', '/api/v2/integration/rewards/cancel'],
    ['GET', CANCEL],
    ['DELETE', '/betSlip'],
  ])('%s %s answers 404 NOT_FOUND', async (method, path) => {
    const response = await fetch(`${api.baseUrl}${path}`, {
      method,
      headers: method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' },
      body: method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(signedBody(merchant)),
    });
    await expectError(response, 404, 10);
  });

  it('answers 404 for a job id nobody was given', async () => {
    await expectError(await api.post(JOB_STATUS, signedBody(merchant, { jobId: randomUUID() })), 404, 10);
  });
});

describe('malformed bodies', () => {
  it.each([READ_ALL, CANCEL, BULK_CANCEL, BULK_CANCEL_BY_QUERY, JOB_STATUS, '/betSlip'])(
    'answers 400 to malformed JSON on %s',
    async (path) => {
      for (const text of ['{"merchantId": "', '{merchantId: 1}', "{'a': 1}", '{"a": 1,}', 'nul']) {
        await expectError(await api.post(path, text), 400, 1);
      }
    },
  );

  it.each([
    ['a JSON array of a signed body', null],
    ['a JSON string', '"hello"'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['an empty body', ''],
  ])('answers 400 to %s', async (_, text) => {
    // The merchant exists only once beforeAll has run, so the array is built here.
    const body = text ?? JSON.stringify([signedBody(merchant)]);
    await expectError(await api.post(READ_ALL, body), 400, 1);
    await expectError(await api.post('/betSlip', body), 400, 1);
  });
});

describe('body size', () => {
  /** A signed bulkCancel body of exactly `bytes` bytes, padded with JSON whitespace. */
  function bodyOfSize(bytes: number): string {
    const compact = JSON.stringify(signedBody(merchant, { externalIds: [`ext-${randomUUID()}`] }));
    const padding = bytes - Buffer.byteLength(compact);
    if (padding < 0) throw new Error(`cannot fit a body in ${bytes} bytes`);
    return `${compact.slice(0, -1)}${' '.repeat(padding)}}`;
  }

  it('accepts a body of exactly BODY_LIMIT_BYTES', async () => {
    const body = bodyOfSize(BODY_LIMIT);
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT);
    const response = await api.post(BULK_CANCEL, body);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-job-id')).toMatch(UUID);
  });

  it('answers 413 PAYLOAD_TOO_LARGE one byte over the limit', async () => {
    const body = bodyOfSize(BODY_LIMIT + 1);
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT + 1);
    await expectError(await api.post(BULK_CANCEL, body), 413, 5);
  });

  it('answers 413 to a large body before looking at its signature', async () => {
    const body = JSON.stringify({ merchantId: randomUUID(), timestamp: 1, hash: 'x', padding: 'y'.repeat(10_000) });
    await expectError(await api.post(READ_ALL, body), 413, 5);
  });

  it('answers 413 to a chunked body without Content-Length that grows past the limit', async () => {
    const chunk = new TextEncoder().encode(`{"padding":"${'z'.repeat(600)}`);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.enqueue(chunk);
        controller.enqueue(new TextEncoder().encode('"}'));
        controller.close();
      },
    });
    const response = await rawPost(READ_ALL, stream, { 'content-type': 'application/json' });
    await expectError(response, 413, 5);
  });
});

describe('reading the body', () => {
  it('joins a body sent in small chunks, a character cut between two of them', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify(signedBody(merchant, { name: 'Ünïcødé ✓ 🎰' })));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 3) controller.enqueue(bytes.slice(offset, offset + 3));
        controller.close();
      },
    });
    const response = await rawPost(READ_ALL, stream, { 'content-type': 'application/json' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it('drops a leading byte-order mark, as a JSON reader does', async () => {
    const body = `\ufeff${JSON.stringify(signedBody(merchant, { id: randomUUID() }))}`;
    const response = await rawPost(CANCEL, new TextEncoder().encode(body), { 'content-type': 'application/json' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-job-id')).toMatch(UUID);
  });

  it('lets a client leave in the middle of its body: the request ends (logged, counted) and others are answered', async () => {
    // The request counter moves only when a request has run to its end, through the access log.
    const abandoned = () => httpRequestsCounted(api.adminUrl, CANCEL, 400);
    const before = await abandoned();
    const { hostname, port } = new URL(api.baseUrl);
    const socket = tcpConnect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST ${CANCEL} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 500\r\n\r\n{"merchantId":',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await expect.poll(abandoned, { timeout: 2_000 }).toBe(before + 1);
    const response = await api.post(READ_ALL, signedBody(merchant));
    expect(response.status).toBe(200);
  });
});

describe('content type', () => {
  it.each([
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data; boundary=x',
  ])('answers 415 UNSUPPORTED_MEDIA_TYPE to %s', async (contentType) => {
    const body = JSON.stringify(signedBody(merchant));
    await expectError(await rawPost(READ_ALL, body, { 'content-type': contentType }), 415, 6);
    await expectError(await rawPost(CANCEL, body, { 'content-type': contentType }), 415, 6);
  });

  it('reads a body sent without Content-Type as JSON', async () => {
    const readAll = await rawPost(READ_ALL, new TextEncoder().encode(JSON.stringify(signedBody(merchant))), {});
    expect(readAll.status).toBe(200);
    expect(await readAll.json()).toEqual([]);
    const cancel = await rawPost(
      CANCEL,
      new TextEncoder().encode(JSON.stringify(signedBody(merchant, { id: randomUUID() }))),
      {},
    );
    expect(cancel.status).toBe(200);
    expect(cancel.headers.get('x-job-id')).toMatch(UUID);
  });

  it('validates a body sent without Content-Type like any other', async () => {
    const body = new TextEncoder().encode(JSON.stringify(signedBody(merchant, { status: 'NOPE' })));
    const message = await expectError(await rawPost(READ_ALL, body, {}), 400, 1);
    expect(message).toMatch(/^status/);
  });

  it.each(['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json'])(
    'accepts %s',
    async (contentType) => {
      const response = await rawPost(READ_ALL, JSON.stringify(signedBody(merchant)), { 'content-type': contentType });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([]);
    },
  );
});

describe('Redis unreachable', () => {
  const cancelRequests = () =>
    [
      [CANCEL, signedBody(merchant, { id: randomUUID() })],
      [BULK_CANCEL, signedBody(merchant, { ids: [randomUUID()] })],
      [BULK_CANCEL_BY_QUERY, signedBody(merchant, { playerIds: ['p1'] })],
    ] as const;

  async function expectUnavailableWithinTwoSeconds(target: TestApi, path: string, body: unknown): Promise<void> {
    // The deadline is the requirement: a request that hangs past 2 s is aborted and fails the test.
    const response = await fetch(`${target.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(2_000),
    });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(response.headers.get('x-job-id')).toBeNull();
    await expectError(response, 503, 11);
  }

  describe('from the start', () => {
    let downApi: TestApi;
    beforeAll(async () => {
      // Nothing listens on port 1.
      downApi = await startTestApi(env, {}, { redisUrl: 'redis://127.0.0.1:1', waitForRedis: false });
    });
    afterAll(async () => {
      await downApi?.close();
    });

    it('cancel routes answer 503 SERVICE_UNAVAILABLE with Retry-After within 2 s', async () => {
      for (const [path, body] of cancelRequests()) await expectUnavailableWithinTwoSeconds(downApi, path, body);
    });

    it('job status answers 503', async () => {
      await expectError(await downApi.post(JOB_STATUS, signedBody(merchant, { jobId: randomUUID() })), 503, 11);
    });

    it('still answers readAll and /betSlip, which never touch the queue', async () => {
      const readAll = await downApi.post(READ_ALL, signedBody(merchant));
      expect(readAll.status).toBe(200);
      const session = await createSession(env.db, { merchantId: merchant.id, playerId: 'redis-down-player' });
      const betSlip = await downApi.post('/betSlip', signedBody(merchant, { authToken: session.token }));
      expect(betSlip.status).toBe(200);
      expect(await betSlip.json()).toMatchObject({ errorCode: 0, playerId: 'redis-down-player' });
    });

    it('is not ready', async () => {
      const response = await downApi.get('/readyz');
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        status: 'unavailable',
        checks: { postgres: 'ok', redis: 'unavailable' },
      });
    });
  });

  describe('lost after start', () => {
    let proxy: TcpProxy;
    let lostApi: TestApi;
    beforeAll(async () => {
      const redis = new URL(env.redisUrl);
      proxy = await startTcpProxy(redis.hostname, Number(redis.port || 6379));
      lostApi = await startTestApi(env, {}, { redisUrl: `redis://127.0.0.1:${proxy.port}` });
    });
    afterAll(async () => {
      await lostApi?.close();
      await proxy?.stop();
    });

    it('answers 200 while Redis is there, then 503 within 2 s once it is gone', async () => {
      const before = await lostApi.post(CANCEL, signedBody(merchant, { id: randomUUID() }));
      expect(before.status).toBe(200);
      await proxy.stop();
      await untilReady(() => lostApi.deps.redis.status !== 'ready', 'the API to notice Redis is gone');
      for (const [path, body] of cancelRequests()) await expectUnavailableWithinTwoSeconds(lostApi, path, body);
    });
  });
});

describe('Postgres unreachable', () => {
  let deadDb: Db;
  let noDatabaseApi: TestApi;
  let queryFailsApi: TestApi;
  let session: { token: string };

  beforeAll(async () => {
    // Nothing listens on port 1.
    deadDb = createDb({
      connectionString: 'postgres://postgres@127.0.0.1:1/nowhere',
      poolSize: 1,
      applicationName: 't',
    });
    noDatabaseApi = await startTestApi(env, {
      db: deadDb,
      merchants: new MerchantDirectory(deadDb, testKeyRing(), { ttlMs: 0, maxEntries: 1, maxBytes: 1 }),
    });
    // Authentication still reaches the merchants, but the route's own queries fail.
    queryFailsApi = await startTestApi(env, { db: deadDb });
    session = await createSession(env.db, { merchantId: merchant.id, playerId: 'pg-down-player' });
  });
  afterAll(async () => {
    await queryFailsApi?.close();
    await noDatabaseApi?.close();
    await deadDb?.destroy();
  });

  it.each([
    [READ_ALL, () => signedBody(merchant)],
    ['/betSlip', () => signedBody(merchant, { authToken: session.token })],
    [CANCEL, () => signedBody(merchant, { id: randomUUID() })],
  ])('answers 503 with Retry-After on %s when merchants cannot be read', async (path, body) => {
    const response = await noDatabaseApi.post(path, body());
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(response, 503, 11);
  });

  it.each([
    [READ_ALL, () => signedBody(merchant)],
    [READ_ALL, () => signedBody(merchant, { limit: 10 })],
    ['/betSlip', () => signedBody(merchant, { authToken: session.token })],
  ])('answers 503 with Retry-After when the query of %s cannot reach Postgres', async (path, body) => {
    const response = await queryFailsApi.post(path, body());
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(response, 503, 11);
  });

  it('answers GET /betSlip with 503 too', async () => {
    const query = new URLSearchParams(
      Object.entries(signedBody(merchant, { authToken: session.token })).map(([k, v]): [string, string] => [
        k,
        String(v),
      ]),
    );
    await expectError(await queryFailsApi.get(`/betSlip?${query}`), 503, 11);
  });

  it('is not ready', async () => {
    const response = await noDatabaseApi.get('/readyz');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'unavailable', checks: { postgres: 'unavailable', redis: 'ok' } });
  });
});

describe('unexpected failures', () => {
  let brokenDb: Db;
  let brokenApi: TestApi;

  beforeAll(async () => {
    // A database that answers, but where the tables cannot be found: every query is a SQL error.
    const url = new URL(env.databaseUrl);
    url.searchParams.set('options', '-c search_path=no_such_schema');
    brokenDb = createDb({ connectionString: url.toString(), poolSize: 1, applicationName: 'broken' });
    brokenApi = await startTestApi(env, { db: brokenDb });
  });
  afterAll(async () => {
    await brokenApi?.close();
    await brokenDb?.destroy();
  });

  it('answers 500 INTERNAL_ERROR with a generic message and no SQL', async () => {
    const response = await brokenApi.post(READ_ALL, signedBody(merchant, { name: 'x' }));
    const message = await expectError(response, 500, 99);
    expect(message).toBe('Internal error');
  });

  it('keeps the request id on a 500', async () => {
    const response = await brokenApi.post(READ_ALL, signedBody(merchant), { 'x-request-id': 'trace-500' });
    expect(response.headers.get('x-request-id')).toBe('trace-500');
    await expectError(response, 500, 99);
  });
});

interface TcpProxy {
  port: number;
  stop(): Promise<void>;
}

/** A TCP relay to Redis that can be cut, to take Redis away from a running API. */
async function startTcpProxy(host: string, port: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(port, host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(socket);
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  let stopped = false;
  return {
    port: address.port,
    async stop() {
      if (stopped) return;
      stopped = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
