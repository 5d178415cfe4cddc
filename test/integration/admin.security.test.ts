import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

const { env, api } = useTestContext({ api: true });
let disabledEnv: TestEnvironment;
let disabledApi: TestApi;

const SOME_UUID = '11111111-2222-4333-8444-555555555555';

/** Every admin route, with a body that would be valid, so that only the token decides. */
const routes: ReadonlyArray<{ method: string; path: string; body?: unknown }> = [
  { method: 'POST', path: '/admin/v1/merchants', body: { name: 'Anyone' } },
  { method: 'PATCH', path: `/admin/v1/merchants/${SOME_UUID}`, body: { status: 'DISABLED' } },
  { method: 'POST', path: `/admin/v1/merchants/${SOME_UUID}/secret-rotations`, body: {} },
  {
    method: 'POST',
    path: `/admin/v1/merchants/${SOME_UUID}/reward-configurations`,
    body: {
      name: 'c',
      status: 'ACTIVE',
      rewardType: 'FREE_BET',
      numberOfFreeBets: 1,
      startDate: 0,
      endDate: 0,
      duration: 1,
      games: [{ gameId: 1, betConstraints: { EUR: { betAmount: 1, maxWinPerBet: 1 } } }],
    },
  },
  {
    method: 'POST',
    path: `/admin/v1/merchants/${SOME_UUID}/rewards`,
    body: { rewards: [{ playerId: 'p', rewardConfigurationId: SOME_UUID }] },
  },
  { method: 'GET', path: `/admin/v1/merchants/${SOME_UUID}/rewards/${SOME_UUID}` },
  {
    method: 'POST',
    path: `/admin/v1/merchants/${SOME_UUID}/sessions`,
    body: { playerId: 'p', currency: 'EUR', balance: 1 },
  },
  { method: 'GET', path: `/admin/v1/jobs/${SOME_UUID}` },
  { method: 'PUT', path: `/admin/v1/merchants/${SOME_UUID}/webhook`, body: { url: 'https://merchant.example/hooks' } },
  { method: 'DELETE', path: `/admin/v1/merchants/${SOME_UUID}/webhook` },
  { method: 'GET', path: `/admin/v1/merchants/${SOME_UUID}/webhook/deliveries` },
  // A path under /admin/v1 that is no route: the gate says nothing more about it than about the others.
  { method: 'GET', path: '/admin/v1/no-such-route' },
];

/** fetch's Response with its JSON body typed loosely, for assertions. */
type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

function call(
  target: TestApi,
  method: string,
  path: string,
  body: unknown,
  authorization: string | undefined,
): Promise<JsonResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  return fetch(`${target.adminUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const admin = (method: string, path: string, body?: unknown) =>
  call(api, method, path, body, `Bearer ${env.config.ADMIN_TOKEN}`);

beforeAll(async () => {
  disabledEnv = await createTestEnvironment({ ADMIN_TOKEN: '' });
  disabledApi = await startTestApi(disabledEnv);
});
afterAll(async () => {
  await disabledApi?.close();
  await disabledEnv?.close();
});

describe('admin token', () => {
  it('is configured for these tests', () => {
    expect(env.config.ADMIN_TOKEN).toBe('test-admin-token-0123456789abcdef0123');
    expect(disabledEnv.config.ADMIN_TOKEN).toBeUndefined();
  });

  const refusals: ReadonlyArray<[string, (token: string) => string | undefined]> = [
    ['no Authorization header', () => undefined],
    ['an empty Authorization header', () => ''],
    ['a wrong token', () => 'Bearer wrong-token-0123456789'],
    ['the token with an extra character', (token) => `Bearer ${token}x`],
    ['a prefix of the token', (token) => `Bearer ${token.slice(0, -1)}`],
    ['the token without the Bearer scheme', (token) => token],
    ['the token under the Basic scheme', (token) => `Basic ${Buffer.from(`admin:${token}`).toString('base64')}`],
    ['Bearer with no token', () => 'Bearer '],
  ];

  for (const [what, header] of refusals) {
    it(`answers 401 to ${what} on every admin route`, async () => {
      for (const route of routes) {
        const response = await call(
          api,
          route.method,
          route.path,
          route.body,
          header(env.config.ADMIN_TOKEN as string),
        );
        expect({ route: route.path, method: route.method, status: response.status }).toEqual({
          route: route.path,
          method: route.method,
          status: 401,
        });
        expect(await response.json()).toEqual({ errorCode: 2, errorMessage: 'Authentication failed' });
        expect(response.headers.get('x-request-id')).toBeTruthy();
      }
    });
  }

  it('checks the token before the body: a bad body without the token is still 401', async () => {
    const response = await call(api, 'POST', '/admin/v1/merchants', { name: '' }, undefined);
    expect(response.status).toBe(401);
    const garbled = await fetch(`${api.adminUrl}/admin/v1/merchants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(garbled.status).toBe(401);
  });

  it('accepts the right token, whatever the case of the scheme', async () => {
    const response = await call(
      api,
      'POST',
      '/admin/v1/merchants',
      { name: 'Case' },
      `bearer ${env.config.ADMIN_TOKEN}`,
    );
    expect(response.status).toBe(201);
  });

  it('makes the whole admin API absent (404) while ADMIN_TOKEN is unset', async () => {
    for (const authorization of [undefined, 'Bearer test-admin-token-0123456789abcdef0123', 'Bearer ']) {
      for (const route of routes) {
        const response = await call(disabledApi, route.method, route.path, route.body, authorization);
        expect({ route: route.path, status: response.status }).toEqual({ route: route.path, status: 404 });
        expect(await response.json()).toEqual({ errorCode: 10, errorMessage: 'Route not found' });
      }
    }
    const merchants = await disabledEnv.db.selectFrom('merchants').select('id').execute();
    expect(merchants).toEqual([]);
  });
});

describe('merchant scoping', () => {
  it("answers 404 for merchant A's reward through merchant B's path", async () => {
    const merchantA = await (await admin('POST', '/admin/v1/merchants', { name: 'A' })).json();
    const merchantB = await (await admin('POST', '/admin/v1/merchants', { name: 'B' })).json();
    const configuration = await (
      await admin('POST', `/admin/v1/merchants/${merchantA.id}/reward-configurations`, routes[3]?.body)
    ).json();
    const created = await admin('POST', `/admin/v1/merchants/${merchantA.id}/rewards`, {
      rewards: [{ playerId: 'pa', rewardConfigurationId: configuration.id, externalId: 'a-1' }],
    });
    expect(created.status).toBe(201);
    const rewardId = (await created.json()).rewards[0].id;

    const ownPath = await admin('GET', `/admin/v1/merchants/${merchantA.id}/rewards/${rewardId}`);
    expect(ownPath.status).toBe(200);
    const otherPath = await admin('GET', `/admin/v1/merchants/${merchantB.id}/rewards/${rewardId}`);
    expect(otherPath.status).toBe(404);
    expect(await otherPath.json()).toEqual({ errorCode: 10, errorMessage: 'Reward not found' });

    // B cannot assign A's configuration either.
    const borrowed = await admin('POST', `/admin/v1/merchants/${merchantB.id}/rewards`, {
      rewards: [{ playerId: 'pb', rewardConfigurationId: configuration.id }],
    });
    expect(await borrowed.json()).toEqual({
      errorCode: 1,
      errorMessage: 'rewards[0].rewardConfigurationId: unknown configuration',
    });
  });
});

describe('secret keys', () => {
  it('appear only in the create and rotate answers', async () => {
    const createdResponse = await admin('POST', '/admin/v1/merchants', { name: 'Quiet' });
    const merchant = await createdResponse.json();
    const firstSecret = merchant.secretKey as string;
    expect(firstSecret).toMatch(/^[0-9a-f]{64}$/);
    const rotatedResponse = await admin('POST', `/admin/v1/merchants/${merchant.id}/secret-rotations`, {});
    const secondSecret = (await rotatedResponse.json()).secretKey as string;
    expect(secondSecret).toMatch(/^[0-9a-f]{64}$/);
    const credentials = { id: merchant.id as string, secretKey: secondSecret };

    const configuration = await admin(
      'POST',
      `/admin/v1/merchants/${merchant.id}/reward-configurations`,
      routes[3]?.body,
    );
    const configurationText = await configuration.text();
    const configurationId = JSON.parse(configurationText).id;
    const rewards = await admin('POST', `/admin/v1/merchants/${merchant.id}/rewards`, {
      rewards: [{ playerId: 'p', rewardConfigurationId: configurationId }],
    });
    const rewardsText = await rewards.text();
    const rewardId = JSON.parse(rewardsText).rewards[0].id;
    const session = await admin('POST', `/admin/v1/merchants/${merchant.id}/sessions`, {
      authToken: 'hidden-test-token',
      playerId: 'p',
      currency: 'EUR',
      balance: 1,
    });
    const cancel = await api.post('/api/v1/integration/rewards/cancel', signedBody(credentials, { id: rewardId }));
    expect(cancel.status).toBe(200);

    const answers: Array<[string, Response | JsonResponse]> = [
      ['configuration', configuration],
      ['rewards', rewards],
      ['session', session],
      ['patch', await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, { allowedIps: ['127.0.0.1'] })],
      ['reward', await admin('GET', `/admin/v1/merchants/${merchant.id}/rewards/${rewardId}`)],
      ['job', await admin('GET', `/admin/v1/jobs/${cancel.headers.get('x-job-id')}`)],
      ['readAll', await api.post('/api/v1/integration/reward-configurations/readAll', signedBody(credentials))],
      ['betSlip', await api.post('/betSlip', signedBody(credentials, { authToken: 'hidden-test-token' }))],
    ];
    const texts: Record<string, string> = { configuration: configurationText, rewards: rewardsText };
    for (const [name, response] of answers) {
      expect({ name, status: response.status }).toEqual({
        name,
        status: name === 'configuration' || name === 'rewards' || name === 'session' ? 201 : 200,
      });
      const text = texts[name] ?? (await response.text());
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toContain(firstSecret);
      expect(text).not.toContain(secondSecret);
      expect(text.toLowerCase()).not.toContain('secret');
    }
  });
});
