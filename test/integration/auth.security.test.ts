import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signMessage } from '../../src/api/auth/signature.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant, createSession, type MerchantOptions } from '../helpers/fixtures.js';
import { queueJobHolding } from '../helpers/queue-inspection.js';
import { bodyBoundHeaders, type MerchantCredentials } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * docs/design.md §2, checked on every merchant route: the same cases run against each entry of `routes`.
 */

const { env, api } = useTestContext({ api: true });
/** The same application behind a "load balancer" at 127.0.0.1: TRUST_PROXY names it. */
let proxiedApi: TestApi;

beforeAll(async () => {
  proxiedApi = await startTestApi(env, { config: { ...env.config, TRUST_PROXY: ['127.0.0.1'] } });
});
afterAll(async () => {
  await proxiedApi?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const WINDOW_MS = 300_000;

interface RouteContext {
  api: TestApi;
  merchant: MerchantCredentials;
  headers: Record<string, string>;
}

interface MerchantRoute {
  name: string;
  method: 'POST' | 'GET';
  path: string;
  /** /api/v1 types merchantId as a UUID (a non-UUID is 400); /betSlip takes any string (a non-UUID is 401). */
  merchantIdIsUuid: boolean;
  /** The fields beside merchantId, timestamp and hash that make a good request for this merchant. */
  prepare(context: RouteContext): Promise<Record<string, unknown>>;
  /** Fields that fail the route's own validation. */
  invalidFields: Record<string, unknown>;
  /** Asserts that the request got through authentication and was served. */
  expectServed(response: Response, prepared: Record<string, unknown>, context: RouteContext): Promise<void>;
}

async function expectJobQueued(response: Response, context: RouteContext): Promise<void> {
  expect(response.status).toBe(200);
  const jobId = response.headers.get('x-job-id');
  expect(jobId).toMatch(UUID);
  expect(await response.text()).toBe('');
  // The answer is only given once Redis holds the job: find it there, under this file's prefix.
  const job = await queueJobHolding(
    context.api.deps.producer.queues.listed().map(({ queue }) => queue),
    jobId as string,
  );
  expect(job?.data.merchantId).toBe(context.merchant.id);
}

/** The merchant's webhook, stored straight away (nothing delivers here: no worker runs in this file). */
async function ensureWebhook(merchant: MerchantCredentials): Promise<void> {
  await env.db
    .insertInto('merchant_webhooks')
    .values({
      merchant_id: merchant.id,
      url: 'https://merchant.example/hooks',
      events: ['job.completed'],
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=',
    })
    .onConflict((conflict) => conflict.column('merchant_id').doNothing())
    .execute();
}

/** The eight webhook routes of a merchant (webhooks/*): each served once the signature holds. */
function webhookRoutes(): MerchantRoute[] {
  const served = (check: (body: any) => void) => async (response: Response) => {
    expect(response.status).toBe(200);
    check(await response.json());
  };
  const route = (
    name: string,
    prepare: MerchantRoute['prepare'],
    invalidFields: Record<string, unknown>,
    check: (body: any) => void,
  ): MerchantRoute => ({
    name: `webhooks/${name}`,
    method: 'POST',
    path: `/api/v1/integration/webhooks/${name}`,
    merchantIdIsUuid: true,
    prepare,
    invalidFields,
    expectServed: served(check),
  });
  const withWebhook = async ({ merchant }: RouteContext) => {
    await ensureWebhook(merchant);
    return {};
  };
  return [
    route('get', withWebhook, { unexpected: true }, (body) => expect(body.url).toBe('https://merchant.example/hooks')),
    route(
      'put',
      async () => ({ url: 'https://merchant.example/hooks' }),
      { url: 42 },
      (body) => expect(body.secret).toMatch(/^whsec_/),
    ),
    route(
      'delete',
      async () => ({}),
      { unexpected: true },
      (body) => expect(typeof body.removed).toBe('boolean'),
    ),
    route('rotateSecret', withWebhook, { unexpected: true }, (body) => expect(body.secret).toMatch(/^whsec_/)),
    route(
      'deliveries',
      async () => ({}),
      { limit: 0 },
      (body) => expect(body).toEqual({ deliveries: [], next: null }),
    ),
    route(
      'redeliver',
      async ({ merchant }) => {
        await ensureWebhook(merchant);
        const id = randomUUID();
        await env.db
          .insertInto('webhook_deliveries')
          .values({ id, merchant_id: merchant.id, type: 'job.completed', job_id: 'j', payload: '{}', state: 'failed' })
          .execute();
        return { eventId: `msg_${id}` };
      },
      { eventId: 42 },
      (body) => expect(body.eventId).toMatch(/^msg_/),
    ),
    route(
      'recover',
      async (context) => ({ ...(await withWebhook(context)), since: Date.now() - 60_000 }),
      { since: 'yesterday' },
      (body) => expect(body).toMatchObject({ events: 0 }),
    ),
    route('test', withWebhook, { unexpected: true }, (body) => expect(body.eventId).toMatch(/^msg_/)),
  ];
}

const routes: MerchantRoute[] = [
  {
    name: 'cancel',
    method: 'POST',
    path: '/api/v1/integration/rewards/cancel',
    merchantIdIsUuid: true,
    prepare: async () => ({ id: randomUUID() }),
    invalidFields: { id: 'not-a-uuid' },
    expectServed: (response, _, context) => expectJobQueued(response, context),
  },
  {
    name: 'bulkCancel',
    method: 'POST',
    path: '/api/v1/integration/rewards/bulkCancel',
    merchantIdIsUuid: true,
    prepare: async () => ({ ids: [randomUUID(), randomUUID()], externalIds: [`ext-${randomUUID()}`] }),
    invalidFields: { ids: ['not-a-uuid'] },
    expectServed: (response, _, context) => expectJobQueued(response, context),
  },
  {
    name: 'bulkCancelByQuery',
    method: 'POST',
    path: '/api/v1/integration/rewards/bulkCancelByQuery',
    merchantIdIsUuid: true,
    prepare: async () => ({ playerIds: [`player-${randomUUID()}`] }),
    invalidFields: { playerIds: 'player-1' },
    expectServed: (response, _, context) => expectJobQueued(response, context),
  },
  {
    name: 'readAll',
    method: 'POST',
    path: '/api/v1/integration/reward-configurations/readAll',
    merchantIdIsUuid: true,
    prepare: async () => ({}),
    invalidFields: { status: 'NOT_A_STATUS' },
    expectServed: async (response) => {
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([]);
    },
  },
  {
    name: 'jobs/cancel',
    method: 'POST',
    path: '/api/v1/integration/jobs/cancel',
    merchantIdIsUuid: true,
    prepare: async ({ api: target, merchant, headers }) => {
      // A queued job of this merchant to abort.
      return { jobId: await queueCancel(target, merchant, headers) };
    },
    invalidFields: { jobId: 42 },
    expectServed: async (response, prepared) => {
      // Served more than once (the rate-limit case sends the same abort ten times): the first aborts,
      // the others find the job already cancelled.
      if (response.status === 409) {
        expect(await response.json()).toMatchObject({ errorCode: 13 });
        return;
      }
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ jobId: prepared.jobId, operation: 'cancel', state: 'cancelled' });
    },
  },
  {
    name: 'jobs/rewards',
    method: 'POST',
    path: '/api/v1/integration/jobs/rewards',
    merchantIdIsUuid: true,
    prepare: async ({ api: target, merchant, headers }) => {
      // A job of this merchant whose (so far empty) list of cancelled rewards to read.
      return { jobId: await queueCancel(target, merchant, headers) };
    },
    invalidFields: { limit: 0 },
    expectServed: async (response) => {
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ rewards: [], next: null });
    },
  },
  {
    name: 'jobs/unapplied',
    method: 'POST',
    path: '/api/v1/integration/jobs/unapplied',
    merchantIdIsUuid: true,
    prepare: async ({ api: target, merchant, headers }) => {
      // A job of this merchant whose (so far empty) list of identifiers not cancelled to read.
      return { jobId: await queueCancel(target, merchant, headers) };
    },
    invalidFields: { limit: 0 },
    expectServed: async (response) => {
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ identifiers: [], next: null });
    },
  },
  {
    name: 'jobs/list',
    method: 'POST',
    path: '/api/v1/integration/jobs/list',
    merchantIdIsUuid: true,
    prepare: async () => ({ states: ['completed'] }),
    invalidFields: { states: ['queued'] },
    expectServed: async (response) => {
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ jobs: [], next: null });
    },
  },
  {
    name: 'jobs/status',
    method: 'POST',
    path: '/api/v1/integration/jobs/status',
    merchantIdIsUuid: true,
    prepare: async ({ api: target, merchant, headers }) => {
      // A job of this merchant to ask about.
      return { jobId: await queueCancel(target, merchant, headers) };
    },
    invalidFields: { jobId: 42 },
    expectServed: async (response, prepared) => {
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ jobId: prepared.jobId, operation: 'cancel', state: 'queued' });
    },
  },
  {
    name: 'jobs/report',
    method: 'POST',
    path: '/api/v1/integration/jobs/report',
    merchantIdIsUuid: true,
    prepare: async ({ api: target, merchant, headers }) => {
      // A bulk job of this merchant, still queued: its report is not ready.
      return { jobId: await queueBulkCancel(target, merchant, headers) };
    },
    invalidFields: { jobId: 42 },
    expectServed: async (response) => {
      expect(response.status).toBe(409);
      expect(response.headers.get('retry-after')).not.toBeNull();
      expect(await response.json()).toMatchObject({ errorCode: 13 });
    },
  },
  {
    name: 'GET jobs/events',
    method: 'GET',
    path: '/api/v1/integration/jobs/events',
    merchantIdIsUuid: true,
    prepare: async ({ api: target, merchant, headers }) => {
      // A queued job of this merchant to follow.
      return { jobId: await queueCancel(target, merchant, headers) };
    },
    invalidFields: { jobId: '' },
    expectServed: async (response) => {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      // The stream stays open while the job waits: leave it.
      await response.body?.cancel();
    },
  },
  ...webhookRoutes(),
  {
    name: 'POST /betSlip',
    method: 'POST',
    path: '/betSlip',
    merchantIdIsUuid: false,
    prepare: betSlipSession,
    invalidFields: { authToken: 42 },
    expectServed: expectBetSlip,
  },
  {
    name: 'GET /betSlip',
    method: 'GET',
    path: '/betSlip',
    merchantIdIsUuid: false,
    prepare: betSlipSession,
    invalidFields: { authToken: undefined },
    expectServed: expectBetSlip,
  },
];

/** Queues a cancel as `merchant`; X-Signature too, for a version 2 merchant (the others ignore it). */
async function queueCancel(target: TestApi, merchant: MerchantCredentials, headers: Record<string, string>) {
  const path = '/api/v1/integration/rewards/cancel';
  const body = JSON.stringify(sign(merchant, { id: randomUUID() }));
  const queued = await target.post(path, body, {
    ...headers,
    ...bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: path, body }),
  });
  if (queued.status !== 200) throw new Error(`could not queue a job: ${queued.status}`);
  return queued.headers.get('x-job-id');
}

async function queueBulkCancel(target: TestApi, merchant: MerchantCredentials, headers: Record<string, string>) {
  const path = '/api/v1/integration/rewards/bulkCancel';
  const body = JSON.stringify(sign(merchant, { ids: [randomUUID()] }));
  const queued = await target.post(path, body, {
    ...headers,
    ...bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: path, body }),
  });
  if (queued.status !== 200) throw new Error(`could not queue a job: ${queued.status}`);
  return queued.headers.get('x-job-id');
}

async function betSlipSession({ merchant }: RouteContext): Promise<Record<string, unknown>> {
  const session = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
  return { authToken: session.token, playerId: session.playerId };
}

async function expectBetSlip(response: Response, prepared: Record<string, unknown>): Promise<void> {
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ errorCode: 0, errorMessage: '', playerId: prepared.playerId });
}

/** A body signed like a merchant would; `options` bend one thing at a time. */
function sign(
  merchant: MerchantCredentials,
  fields: Record<string, unknown> = {},
  options: { timestamp?: number | string; secretKey?: string; hash?: string } = {},
): Record<string, unknown> {
  const timestamp = options.timestamp ?? Date.now();
  return {
    merchantId: merchant.id,
    timestamp,
    hash: options.hash ?? signMessage(merchant.id, timestamp, options.secretKey ?? merchant.secretKey),
    ...fields,
  };
}

/** Sends the fields as the route takes them: a JSON body, or (GET) query parameters. */
function send(
  route: MerchantRoute,
  fields: Record<string, unknown>,
  headers: Record<string, string> = {},
  target: TestApi = api,
): Promise<Response> {
  if (route.method === 'POST') return target.post(route.path, fields, headers);
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) query.set(key, String(value));
  return target.get(`${route.path}?${query}`, headers);
}

/**
 * Signature version 2: serialises the request first, so that `X-Signature` signs the very bytes (or,
 * for GET, the very query string) that are sent. `signedAs` bends what the header signs.
 */
function sendBodyBound(
  route: MerchantRoute,
  merchant: MerchantCredentials,
  fields: Record<string, unknown>,
  signedAs: { method?: string; path?: string; t?: number; secretKey?: string } = {},
): Promise<Response> {
  const signed = sign(merchant, fields);
  const method = signedAs.method ?? route.method;
  if (route.method === 'POST') {
    const body = JSON.stringify(signed);
    const headers = bodyBoundHeaders(merchant, { method, pathWithQuery: signedAs.path ?? route.path, body }, signedAs);
    return api.post(route.path, body, headers);
  }
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(signed)) if (value !== undefined) query.set(key, String(value));
  const pathWithQuery = `${route.path}?${query}`;
  const headers = bodyBoundHeaders(
    merchant,
    { method, pathWithQuery: signedAs.path ? `${signedAs.path}?${query}` : pathWithQuery, body: '' },
    signedAs,
  );
  return api.get(pathWithQuery, headers);
}

/** Prepares, signs and sends a good request; returns what is needed to check the answer. */
async function sendGood(
  route: MerchantRoute,
  merchant: MerchantCredentials,
  signing: { timestamp?: number | string; secretKey?: string; hash?: string } = {},
  headers: Record<string, string> = {},
  target: TestApi = api,
) {
  const context = { api: target, merchant, headers };
  const prepared = await route.prepare(context);
  const { playerId: _playerId, ...fields } = prepared;
  const response = await send(route, sign(merchant, fields, signing), headers, target);
  return { response, prepared, context };
}

async function expectServedWith(
  route: MerchantRoute,
  merchant: MerchantCredentials,
  signing: { timestamp?: number | string; secretKey?: string; hash?: string } = {},
  headers: Record<string, string> = {},
  target: TestApi = api,
): Promise<void> {
  const { response, prepared, context } = await sendGood(route, merchant, signing, headers, target);
  await route.expectServed(response, prepared, context);
}

async function expectError(response: Response, status: number, errorCode: number): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['errorCode', 'errorMessage']);
  expect(body.errorCode).toBe(errorCode);
  expect(typeof body.errorMessage).toBe('string');
  return body;
}

const merchant = (options: MerchantOptions = {}) => createMerchant(env.db, options);

/** A timestamp close to now whose digest, for this merchant, starts with `prefix`. */
function timestampWithDigestPrefix(credentials: MerchantCredentials, prefix: string): number {
  const now = Date.now();
  for (let candidate = now; candidate > now - 100_000; candidate--) {
    if (signMessage(credentials.id, candidate, credentials.secretKey).startsWith(prefix)) return candidate;
  }
  throw new Error(`no digest starting with ${prefix}`);
}

const MISSING = Symbol('missing');
const fieldCases: Array<{ field: 'merchantId' | 'timestamp' | 'hash'; value: unknown; inQuery: boolean }> = [
  { field: 'merchantId', value: MISSING, inQuery: true },
  { field: 'merchantId', value: '', inQuery: true },
  { field: 'merchantId', value: 12345, inQuery: false },
  { field: 'merchantId', value: null, inQuery: false },
  { field: 'timestamp', value: MISSING, inQuery: true },
  { field: 'timestamp', value: 'yesterday', inQuery: true },
  { field: 'timestamp', value: -1, inQuery: true },
  { field: 'timestamp', value: 1763679600000.5, inQuery: true },
  { field: 'timestamp', value: '1763679600000.0', inQuery: true },
  { field: 'timestamp', value: ' 1763679600000', inQuery: true },
  { field: 'timestamp', value: 2 ** 53, inQuery: true },
  { field: 'timestamp', value: null, inQuery: false },
  { field: 'timestamp', value: true, inQuery: false },
  { field: 'hash', value: MISSING, inQuery: true },
  { field: 'hash', value: 1234, inQuery: false },
  { field: 'hash', value: null, inQuery: false },
  { field: 'hash', value: ['ab12'], inQuery: false },
];

describe.each(routes)('$name', (route) => {
  describe('signed fields', () => {
    const cases = fieldCases.filter((c) => route.method === 'POST' || c.inQuery);
    it.each(cases)('answers 400 naming the field when $field is $value', async ({ field, value }) => {
      const owner = await merchant();
      const { playerId: _, ...fields } = await route.prepare({ api, merchant: owner, headers: {} });
      const body = sign(owner, fields);
      if (value === MISSING) delete body[field];
      else body[field] = value;
      const error = await expectError(await send(route, body), 400, 1);
      expect(error.errorMessage).toMatch(new RegExp(`^${field}\\b`));
    });

    if (route.merchantIdIsUuid) {
      it('answers 400 naming merchantId when it is not a UUID', async () => {
        const error = await expectError(await send(route, sign({ id: 'merchant-one', secretKey: 'secret' })), 400, 1);
        expect(error.errorMessage).toMatch(/^merchantId\b/);
      });
    } else {
      it('answers 401 AUTHENTICATION_FAILED when merchantId is not a UUID (it is any string here)', async () => {
        await expectError(await send(route, sign({ id: 'merchant-one', secretKey: 'secret' })), 401, 2);
      });
    }

    it('accepts a well-signed request', async () => {
      await expectServedWith(route, await merchant());
    });

    it('accepts the timestamp as a string of digits', async () => {
      await expectServedWith(route, await merchant(), { timestamp: String(Date.now()) });
    });
  });

  describe('who is asking', () => {
    it('tells unknown merchant, disabled merchant, wrong hash and malformed hash apart, echoing no secret', async () => {
      const active = await merchant();
      const disabled = await merchant({ status: 'DISABLED' });
      const { playerId: _, ...fields } = await route.prepare({ api, merchant: active, headers: {} });
      const timestamp = Date.now();
      const goodHash = signMessage(active.id, timestamp, active.secretKey);
      const refusals: Array<[Record<string, unknown>, RegExp]> = [
        [sign({ id: randomUUID(), secretKey: 'whatever' }, fields), /unknown merchantId/],
        [sign(disabled, fields), /merchant is disabled/],
        [
          sign(active, fields, { timestamp, secretKey: 'not-the-secret' }),
          new RegExp(`does not match.*"${timestamp}"`),
        ],
        [sign(active, fields, { hash: '' }), /hash must be 1 to 64 hex characters/],
        [sign(active, fields, { hash: 'not-hex-at-all' }), /hash must be 1 to 64 hex characters/],
        [sign(active, fields, { hash: 'a'.repeat(65) }), /hash must be 1 to 64 hex characters/],
        [sign(active, fields, { timestamp, hash: `0${goodHash}` }), /hash must be 1 to 64 hex characters/],
      ];
      if (!route.merchantIdIsUuid)
        refusals.push([sign({ id: 'not-a-uuid', secretKey: 'x' }, fields), /unknown merchantId/]);
      for (const [request, message] of refusals) {
        const body = await expectError(await send(route, request), 401, 2);
        expect(body.errorMessage).toMatch(/^Authentication failed: /);
        expect(body.errorMessage).toMatch(message);
        for (const secret of [active.secretKey, goodHash, active.id, disabled.secretKey]) {
          expect(body.errorMessage).not.toContain(secret);
        }
      }
    });

    it('refuses a merchant whose hash is right but who is disabled', async () => {
      await expectError(await send(route, sign(await merchant({ status: 'DISABLED' }))), 401, 2);
    });
  });

  describe('timestamp window', () => {
    it.each([
      ['older', -1],
      ['newer', 1],
    ])('answers 401 TIMESTAMP_EXPIRED to a good signature on a timestamp %s than the window', async (_, sign_) => {
      const owner = await merchant();
      const { response } = await sendGood(route, owner, { timestamp: Date.now() + sign_ * (WINDOW_MS + 60_000) });
      await expectError(response, 401, 3);
    });

    it('answers 401 AUTHENTICATION_FAILED to a bad signature, whatever its timestamp', async () => {
      const owner = await merchant();
      for (const timestamp of [Date.now() - WINDOW_MS - 60_000, Date.now() + WINDOW_MS + 60_000, 0]) {
        const wrongKey = await sendGood(route, owner, { timestamp, secretKey: 'wrong' });
        await expectError(wrongKey.response, 401, 2);
        const malformed = await sendGood(route, owner, { timestamp, hash: 'xyz' });
        await expectError(malformed.response, 401, 2);
      }
    });

    it('accepts timestamps inside the window on both sides', async () => {
      const owner = await merchant();
      await expectServedWith(route, owner, { timestamp: Date.now() - (WINDOW_MS - 60_000) });
      await expectServedWith(route, owner, { timestamp: Date.now() + (WINDOW_MS - 60_000) });
    });
  });

  describe('hash spelling', () => {
    it('accepts the digest in upper case', async () => {
      const owner = await merchant();
      const timestamp = Date.now();
      await expectServedWith(route, owner, {
        timestamp,
        hash: signMessage(owner.id, timestamp, owner.secretKey).toUpperCase(),
      });
    });

    it('accepts the digest with its leading zeros dropped', async () => {
      const owner = await merchant();
      const timestamp = timestampWithDigestPrefix(owner, '0');
      const stripped = signMessage(owner.id, timestamp, owner.secretKey).replace(/^0+/, '');
      expect(stripped.length).toBeLessThan(64);
      await expectServedWith(route, owner, { timestamp, hash: stripped });
    });
  });

  describe('secret rotation', () => {
    it('accepts both the current and the previous secret until the previous one expires', async () => {
      const owner = await merchant({
        secretKey: 'new-secret',
        previousSecretKey: 'old-secret',
        previousSecretValidUntil: Date.now() + 60 * 60 * 1000,
      });
      await expectServedWith(route, owner);
      await expectServedWith(route, owner, { secretKey: 'old-secret' });
    });

    it('refuses the previous secret after its expiry, and still accepts the current one', async () => {
      const owner = await merchant({
        secretKey: 'new-secret',
        previousSecretKey: 'old-secret',
        previousSecretValidUntil: Date.now() - 1_000,
      });
      const { response } = await sendGood(route, owner, { secretKey: 'old-secret' });
      await expectError(response, 401, 2);
      await expectServedWith(route, owner);
    });
  });

  describe('source address allow-list', () => {
    it('serves a caller inside the list (127.0.0.1/32)', async () => {
      await expectServedWith(route, await merchant({ allowedIps: ['127.0.0.1/32'] }));
    });

    it('answers 403 FORBIDDEN to a caller outside the list', async () => {
      const owner = await merchant({ allowedIps: ['10.0.0.0/8'] });
      await expectError(await send(route, sign(owner)), 403, 4);
    });

    it('ignores X-Forwarded-For while TRUST_PROXY is off', async () => {
      const owner = await merchant({ allowedIps: ['10.0.0.0/8'] });
      await expectError(await send(route, sign(owner), { 'x-forwarded-for': '10.1.2.3' }), 403, 4);
    });

    it('checks the signature first: a bad signature from outside the list is 401, not 403', async () => {
      const owner = await merchant({ allowedIps: ['10.0.0.0/8'] });
      await expectError(await send(route, sign(owner, {}, { secretKey: 'wrong' })), 401, 2);
    });

    it('with TRUST_PROXY, judges the address the trusted proxy forwarded', async () => {
      const owner = await merchant({ allowedIps: ['203.0.113.0/24'] });
      await expectServedWith(route, owner, {}, { 'x-forwarded-for': '203.0.113.9' }, proxiedApi);
      await expectServedWith(route, owner, {}, { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' }, proxiedApi);
      const refused = [undefined, '198.51.100.1', '203.0.113.9, 198.51.100.1'];
      for (const forwarded of refused) {
        const headers: Record<string, string> = forwarded ? { 'x-forwarded-for': forwarded } : {};
        await expectError(await send(route, sign(owner), headers, proxiedApi), 403, 4);
      }
    });
  });

  describe('order of checks', () => {
    it('validates the rest of the body only after the signature holds', async () => {
      const owner = await merchant();
      const { playerId: _, ...fields } = await route.prepare({ api, merchant: owner, headers: {} });
      const invalid = { ...fields, ...route.invalidFields };
      await expectError(await send(route, sign(owner, invalid, { secretKey: 'wrong' })), 401, 2);
      await expectError(await send(route, sign({ id: randomUUID(), secretKey: 'x' }, invalid)), 401, 2);
      // Signed, the same body is refused for what it is.
      await expectError(await send(route, sign(owner, invalid)), 400, 1);
    });
  });

  describe('signature version 2 (X-Signature)', () => {
    const v2Merchant = () => merchant({ signatureVersion: 2 });
    const prepared = async (owner: MerchantCredentials) => {
      const context = { api, merchant: owner, headers: {} };
      const all = await route.prepare(context);
      const { playerId: _, ...fields } = all;
      return { all, fields, context };
    };

    it('serves a version 2 merchant whose X-Signature signs this very request', async () => {
      const owner = await v2Merchant();
      const { all, fields, context } = await prepared(owner);
      await route.expectServed(await sendBodyBound(route, owner, fields), all, context);
    });

    it('refuses a version 2 merchant without X-Signature, even with a good hash (401, errorCode 2)', async () => {
      const owner = await v2Merchant();
      const { fields } = await prepared(owner);
      await expectError(await send(route, sign(owner, fields)), 401, 2);
    });

    it('refuses an X-Signature made for another path, another method or another secret (errorCode 2)', async () => {
      const owner = await v2Merchant();
      const { fields } = await prepared(owner);
      const otherPath = route.path === '/betSlip' ? '/api/v1/integration/rewards/cancel' : '/betSlip';
      await expectError(await sendBodyBound(route, owner, fields, { path: otherPath }), 401, 2);
      await expectError(
        await sendBodyBound(route, owner, fields, { method: route.method === 'GET' ? 'POST' : 'GET' }),
        401,
        2,
      );
      await expectError(await sendBodyBound(route, owner, fields, { secretKey: 'not-the-secret' }), 401, 2);
    });

    it('answers 401 TIMESTAMP_EXPIRED to a good X-Signature whose t is outside the window', async () => {
      const owner = await v2Merchant();
      const { fields } = await prepared(owner);
      await expectError(await sendBodyBound(route, owner, fields, { t: Date.now() - WINDOW_MS - 60_000 }), 401, 3);
    });

    it('leaves a version 1 merchant as it was: no X-Signature needed, a bad one ignored', async () => {
      const owner = await merchant();
      await expectServedWith(route, owner);
      await expectServedWith(route, owner, {}, { 'x-signature': 't=1,v1=00' });
    });
  });

  describe('rate limit', () => {
    it('answers 429 RATE_LIMITED with Retry-After past the merchant limit', async () => {
      const owner = await merchant({ rateLimitPerSecond: 2 });
      const context = { api, merchant: owner, headers: {} };
      const prepared = await route.prepare(context);
      const { playerId: _, ...fields } = prepared;
      // Ten at once: with 2 a second, they cannot all pass unless they spread over five seconds.
      const responses = await Promise.all(Array.from({ length: 10 }, () => send(route, sign(owner, fields))));
      const limited = responses.filter((response) => response.status === 429);
      const served = responses.filter((response) => response.status !== 429);
      expect(limited.length).toBeGreaterThanOrEqual(1);
      expect(served.length).toBeGreaterThanOrEqual(1);
      for (const response of limited) {
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(response.headers.get('ratelimit-remaining')).toBe('0');
        await expectError(response, 429, 7);
      }
      // Every answer to a rate-limited merchant says where it stands, served or not.
      for (const response of responses) {
        expect(response.headers.get('ratelimit-limit')).toBe('2');
        expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
      }
      for (const response of served) await route.expectServed(response, prepared, context);
    });
  });

  describe('request id', () => {
    it('echoes the caller X-Request-Id on success and on error', async () => {
      const owner = await merchant();
      const served = await sendGood(route, owner, {}, { 'x-request-id': 'caller-req.42:a' });
      expect(served.response.headers.get('x-request-id')).toBe('caller-req.42:a');
      await route.expectServed(served.response, served.prepared, served.context);
      const refused = await send(route, sign(owner, {}, { secretKey: 'wrong' }), { 'x-request-id': 'caller-req-43' });
      expect(refused.headers.get('x-request-id')).toBe('caller-req-43');
      await expectError(refused, 401, 2);
    });

    it('generates one when none (or an unusable one) is given', async () => {
      const owner = await merchant();
      const served = await sendGood(route, owner);
      const generated = served.response.headers.get('x-request-id');
      expect(generated).toMatch(UUID);
      await route.expectServed(served.response, served.prepared, served.context);
      const unusable = await send(route, sign(owner, {}, { secretKey: 'wrong' }), { 'x-request-id': 'x'.repeat(300) });
      expect(unusable.headers.get('x-request-id')).toMatch(UUID);
      expect(unusable.headers.get('x-request-id')).not.toBe(generated);
      await expectError(unusable, 401, 2);
    });
  });
});

/** Merchant routes are those under /api/v1 and /betSlip: the ones the signature middleware guards. */
const isMerchantPath = (path: string) => path.startsWith('/api/v1/') || path === '/betSlip';

describe('the route table above', () => {
  it('lists every merchant route the application registers, so a new route cannot skip these cases', () => {
    const registered = new Set(
      api.app.routes
        .filter((route) => route.method !== 'ALL' && isMerchantPath(route.path))
        .map((route) => `${route.method} ${route.path}`),
    );
    expect(registered.size).toBeGreaterThan(0);
    expect(routes.map((route) => `${route.method} ${route.path}`).sort()).toEqual([...registered].sort());
  });

  it('lists every merchant operation of the OpenAPI document', async () => {
    const document = (await (await api.get('/openapi.json')).json()) as { paths: Record<string, object> };
    const documented = Object.entries(document.paths)
      .filter(([path]) => isMerchantPath(path))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(routes.map((route) => `${route.method} ${route.path}`).sort()).toEqual(documented.sort());
  });
});

describe('bodies that are not a JSON object', () => {
  const bodyCases = [
    { what: 'malformed JSON', text: '{"merchantId":', message: 'Malformed JSON in request body' },
    { what: 'null', text: 'null', message: 'Request body must be a JSON object' },
    { what: 'an array', text: '[]', message: 'Request body must be a JSON object' },
    { what: 'a number', text: '42', message: 'Request body must be a JSON object' },
    { what: 'a string', text: '"merchantId"', message: 'Request body must be a JSON object' },
  ];
  const cases = routes
    .filter((route) => route.method === 'POST')
    .flatMap((route) => bodyCases.map((body) => ({ route: route.name, path: route.path, ...body })));

  it.each(cases)(
    '$route answers 400 INVALID_REQUEST to $what, before anything else',
    async ({ path, text, message }) => {
      const response = await api.post(path, text);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ errorCode: 1, errorMessage: message });
    },
  );
});

describe('rate limiting across routes', () => {
  it('is off unless configured: a burst from a merchant without a limit is all served', async () => {
    const owner = await merchant();
    const readAll = routes.find((route) => route.name === 'readAll') as MerchantRoute;
    const responses = await Promise.all(Array.from({ length: 20 }, () => send(readAll, sign(owner))));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
  });

  it('does not count refused requests against the merchant', async () => {
    const owner = await merchant({ rateLimitPerSecond: 1 });
    const readAll = routes.find((route) => route.name === 'readAll') as MerchantRoute;
    for (let i = 0; i < 5; i++) {
      await expectError(await send(readAll, sign(owner, {}, { secretKey: 'wrong' })), 401, 2);
    }
    const served = await send(readAll, sign(owner));
    expect(served.status).toBe(200);
  });

  it('shares one budget between the routes of a merchant', async () => {
    const owner = await merchant({ rateLimitPerSecond: 2 });
    const readAll = routes.find((route) => route.name === 'readAll') as MerchantRoute;
    const cancel = routes.find((route) => route.name === 'cancel') as MerchantRoute;
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 ? send(readAll, sign(owner)) : send(cancel, sign(owner, { id: randomUUID() })),
      ),
    );
    expect(responses.filter((response) => response.status === 429).length).toBeGreaterThanOrEqual(1);
  });

  it('keeps merchants apart: one merchant at its limit does not limit another', async () => {
    const busy = await merchant({ rateLimitPerSecond: 1 });
    const quiet = await merchant({ rateLimitPerSecond: 1 });
    const readAll = routes.find((route) => route.name === 'readAll') as MerchantRoute;
    const burst = await Promise.all(Array.from({ length: 5 }, () => send(readAll, sign(busy))));
    expect(burst.some((response) => response.status === 429)).toBe(true);
    expect((await send(readAll, sign(quiet))).status).toBe(200);
  });
});

describe('secrets stay out of answers', () => {
  it('never echoes the hash, the secret or a key fragment in a refusal', async () => {
    const secretKey = `secret-${randomBytes(16).toString('hex')}`;
    const owner = await merchant({ secretKey });
    const readAll = routes.find((route) => route.name === 'readAll') as MerchantRoute;
    const hash = signMessage(owner.id, Date.now() - WINDOW_MS * 2, secretKey);
    const responses = [
      await send(readAll, sign(owner, {}, { timestamp: Date.now() - WINDOW_MS * 2, hash })),
      await send(readAll, sign(owner, {}, { secretKey: 'wrong' })),
      await send(readAll, sign(owner, { status: 'NOPE' })),
    ];
    for (const response of responses) {
      const text = await response.text();
      expect(text).not.toContain(secretKey);
      expect(text).not.toContain(hash);
      expect(text).not.toContain(owner.id);
    }
  });
});
