import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeaderValue } from '../../src/api/auth/signature.js';
import { recordJobsFinished } from '../../src/shared/jobs/cancellation-jobs.repository.js';
import { testKeyRing } from '../helpers/fixtures.js';
import { type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// A long merchant cache: a change is seen at once only because the admin API clears the entry.
const { env, api } = useTestContext({ settings: { MERCHANT_CACHE_TTL_MS: '600000' }, api: true });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HOUR_MS = 60 * 60 * 1000;

/** fetch's Response with its JSON body typed loosely, for assertions. */
type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

async function admin(method: string, path: string, body?: unknown): Promise<JsonResponse> {
  return fetch(`${api.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function createMerchant(fields: Record<string, unknown> = {}): Promise<MerchantCredentials & { name: string }> {
  const response = await admin('POST', '/admin/v1/merchants', { name: 'Merchant', ...fields });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { id: string; name: string; secretKey: string };
  return { id: body.id, name: body.name, secretKey: body.secretKey };
}

const readAll = (merchant: MerchantCredentials, fields: Record<string, unknown> = {}) =>
  api.post('/api/v1/integration/reward-configurations/readAll', signedBody(merchant, fields));

function configurationBody(fields: Record<string, unknown> = {}) {
  return {
    name: 'Weekend free bets',
    status: 'ACTIVE',
    rewardType: 'FREE_BET',
    numberOfFreeBets: 5,
    startDate: 1_767_225_600_000,
    endDate: 1_769_904_000_000,
    duration: 1_440,
    games: [{ gameId: 7, betConstraints: { EUR: { betAmount: 1, maxWinPerBet: 50 } } }],
    ...fields,
  };
}

async function createConfiguration(merchantId: string, fields: Record<string, unknown> = {}) {
  const response = await admin('POST', `/admin/v1/merchants/${merchantId}/reward-configurations`, {
    ...configurationBody(fields),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
}

describe('merchants', () => {
  it('creates a merchant with a generated secret that signs requests', async () => {
    const response = await admin('POST', '/admin/v1/merchants', { name: 'Casino Royale' });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Casino Royale',
      secretKey: expect.any(String),
      status: 'ACTIVE',
    });
    expect(body.secretKey).toMatch(/^[0-9a-f]{64}$/);
    const row = await env.db.selectFrom('merchants').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      name: 'Casino Royale',
      status: 'ACTIVE',
      allowed_ips: null,
    });
    // Stored sealed for this merchant, never as given.
    expect(row.secret_key).not.toContain(body.secretKey);
    expect(testKeyRing().open(row.secret_key, body.id, 'merchants.secret_key')).toBe(body.secretKey);
    expect((await readAll({ id: body.id, secretKey: body.secretKey })).status).toBe(200);
  });

  it('keeps a given secret and allow-list', async () => {
    const allowedIps = ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32'];
    const response = await admin('POST', '/admin/v1/merchants', {
      name: 'Given secret',
      secretKey: 'a-given-secret-of-at-least-32-characters',
      allowedIps,
    });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Given secret',
      secretKey: 'a-given-secret-of-at-least-32-characters',
      status: 'ACTIVE',
    });
    const row = await env.db.selectFrom('merchants').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(row.allowed_ips).toEqual(allowedIps);
    // The test client is 127.0.0.1, inside the list.
    expect((await readAll({ id: body.id, secretKey: body.secretKey })).status).toBe(200);
  });

  it('disables and re-enables a merchant, and changes its allow-list, effective at once', async () => {
    const merchant = await createMerchant({ name: 'Patched' });
    expect((await readAll(merchant)).status).toBe(200); // now cached

    const disabled = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, { status: 'DISABLED' });
    expect(disabled.status).toBe(200);
    expect(await disabled.json()).toEqual({
      id: merchant.id,
      name: 'Patched',
      status: 'DISABLED',
      allowedIps: null,
      maxQueuedJobs: null,
      rateLimitPerSecond: null,
      signatureVersion: 1,
      requireSignatureV2: false,
    });
    expect(await (await readAll(merchant)).json()).toEqual({
      errorCode: 2,
      errorMessage: 'Authentication failed: this merchant is disabled; ask the operator',
    });

    const elsewhere = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, {
      status: 'ACTIVE',
      allowedIps: ['192.0.2.0/24'],
    });
    expect(elsewhere.status).toBe(200);
    expect(await elsewhere.json()).toEqual({
      id: merchant.id,
      name: 'Patched',
      status: 'ACTIVE',
      allowedIps: ['192.0.2.0/24'],
      maxQueuedJobs: null,
      rateLimitPerSecond: null,
      signatureVersion: 1,
      requireSignatureV2: false,
    });
    expect((await readAll(merchant)).status).toBe(403);

    // Fields left out keep their value; null opens the allow-list.
    const statusOnly = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, {});
    expect(await statusOnly.json()).toMatchObject({ status: 'ACTIVE', allowedIps: ['192.0.2.0/24'] });
    const open = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, { allowedIps: null });
    expect(await open.json()).toEqual({
      id: merchant.id,
      name: 'Patched',
      status: 'ACTIVE',
      allowedIps: null,
      maxQueuedJobs: null,
      rateLimitPerSecond: null,
      signatureVersion: 1,
      requireSignatureV2: false,
    });
    expect((await readAll(merchant)).status).toBe(200);
  });
});

describe('merchant quotas', () => {
  it('sets and resets maxQueuedJobs and rateLimitPerSecond, effective at once', async () => {
    const merchant = await createMerchant({ name: 'Quota' });
    // The deployment default (RATE_LIMIT_PER_SECOND, 1,000) until the merchant has its own; now cached.
    expect((await readAll(merchant)).headers.get('ratelimit-limit')).toBe('1000');

    const limited = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, {
      maxQueuedJobs: 3,
      rateLimitPerSecond: 1,
    });
    expect(limited.status).toBe(200);
    expect(await limited.json()).toEqual({
      id: merchant.id,
      name: 'Quota',
      status: 'ACTIVE',
      allowedIps: null,
      maxQueuedJobs: 3,
      rateLimitPerSecond: 1,
      signatureVersion: 1,
      requireSignatureV2: false,
    });
    // What authentication hands to the routes (the producer reads maxQueuedJobs from it).
    expect(await api.deps.merchants.find(merchant.id)).toMatchObject({ maxQueuedJobs: 3, rateLimitPerSecond: 1 });
    // One request a second: a second one soon after is refused (tried until it falls in the same window).
    const statuses: number[] = [];
    for (let i = 0; i < 20 && !statuses.includes(429); i++) statuses.push((await readAll(merchant)).status);
    expect(statuses).toContain(429);

    // Fields left out keep their value; null returns to the defaults (here: 1,000 requests a second).
    expect(await (await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, {})).json()).toMatchObject({
      maxQueuedJobs: 3,
      rateLimitPerSecond: 1,
    });
    const reset = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, {
      maxQueuedJobs: null,
      rateLimitPerSecond: null,
      signatureVersion: 1,
      requireSignatureV2: false,
    });
    expect(await reset.json()).toMatchObject({ maxQueuedJobs: null, rateLimitPerSecond: null });
    const burst = await Promise.all(Array.from({ length: 5 }, () => readAll(merchant)));
    expect(burst.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    expect(burst[0]?.headers.get('ratelimit-limit')).toBe('1000');
    expect(await api.deps.merchants.find(merchant.id)).toMatchObject({ maxQueuedJobs: null, rateLimitPerSecond: null });
  });
});

describe('signature version', () => {
  it('switches a merchant to body-bound signatures and back, effective at once', async () => {
    const merchant = await createMerchant({ name: 'Signing' });
    expect((await readAll(merchant)).status).toBe(200); // version 1 by default; now cached

    const v2 = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, { signatureVersion: 2 });
    expect(v2.status).toBe(200);
    expect(await v2.json()).toMatchObject({ id: merchant.id, signatureVersion: 2 });
    expect(await api.deps.merchants.find(merchant.id)).toMatchObject({ signatureVersion: 2 });
    // The interface's fields alone no longer pass; with X-Signature over the very request they do.
    expect(await (await readAll(merchant)).json()).toEqual({
      errorCode: 2,
      errorMessage: 'Authentication failed: X-Signature header missing (this merchant signs with version 2)',
    });
    const body = JSON.stringify(signedBody(merchant));
    const path = '/api/v1/integration/reward-configurations/readAll';
    const headers = {
      'x-signature': signatureHeaderValue(merchant.secretKey, Date.now(), {
        method: 'POST',
        pathWithQuery: path,
        body,
      }),
    };
    expect((await api.post(path, body, headers)).status).toBe(200);

    // Fields left out keep their value.
    expect(await (await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, {})).json()).toMatchObject({
      signatureVersion: 2,
    });
    const v1 = await admin('PATCH', `/admin/v1/merchants/${merchant.id}`, { signatureVersion: 1 });
    expect(await v1.json()).toMatchObject({ signatureVersion: 1 });
    expect((await readAll(merchant)).status).toBe(200);
  });
});

describe('secret rotation', () => {
  it('keeps the old secret valid for 24 h by default, and for no time with previousValidForMs 0', async () => {
    const first = await createMerchant({ name: 'Rotating' });
    expect((await readAll(first)).status).toBe(200); // cached with the first secret

    const before = Date.now();
    const rotated = await admin('POST', `/admin/v1/merchants/${first.id}/secret-rotations`, {});
    const after = Date.now();
    expect(rotated.status).toBe(201);
    const body = await rotated.json();
    expect(Object.keys(body).sort()).toEqual(['previousValidUntil', 'secretKey']);
    expect(body.secretKey).toMatch(/^[0-9a-f]{64}$/);
    expect(body.secretKey).not.toBe(first.secretKey);
    expect(body.previousValidUntil).toBeGreaterThanOrEqual(before + 24 * HOUR_MS);
    expect(body.previousValidUntil).toBeLessThanOrEqual(after + 24 * HOUR_MS);
    const second = { id: first.id, secretKey: body.secretKey as string };
    expect((await readAll(second)).status).toBe(200);
    expect((await readAll(first)).status).toBe(200);

    const again = await admin('POST', `/admin/v1/merchants/${first.id}/secret-rotations`, { previousValidForMs: 0 });
    expect(again.status).toBe(201);
    const third = { id: first.id, secretKey: (await again.json()).secretKey as string };
    expect((await readAll(third)).status).toBe(200);
    expect((await readAll(second)).status).toBe(401);
    expect((await readAll(first)).status).toBe(401);
  });

  it('honours a given previousValidForMs', async () => {
    const merchant = await createMerchant();
    const before = Date.now();
    const response = await admin('POST', `/admin/v1/merchants/${merchant.id}/secret-rotations`, {
      previousValidForMs: HOUR_MS,
    });
    expect(response.status).toBe(201);
    const { previousValidUntil, secretKey } = await response.json();
    expect(previousValidUntil).toBeGreaterThanOrEqual(before + HOUR_MS);
    expect(previousValidUntil).toBeLessThanOrEqual(Date.now() + HOUR_MS);
    const row = await env.db
      .selectFrom('merchants')
      .selectAll()
      .where('id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    expect(row.previous_secret_key).not.toBeNull();
    expect(testKeyRing().open(row.previous_secret_key as string, merchant.id, 'merchants.previous_secret_key')).toBe(
      merchant.secretKey,
    );
    expect(testKeyRing().open(row.secret_key, merchant.id, 'merchants.secret_key')).toBe(secretKey);
    expect(row.previous_secret_valid_until?.getTime()).toBe(previousValidUntil);
  });
});

describe('reward configurations', () => {
  it('answers the configuration exactly as readAll shows it, amounts unrounded', async () => {
    const merchant = await createMerchant({ name: 'Configured' });
    const sent = {
      externalId: 'cfg-ext-1',
      name: 'Welcome bonus',
      status: 'INACTIVE',
      rewardType: 'FREE_BET',
      numberOfFreeBets: 10,
      startDate: '2026-01-01T00:00:00Z',
      endDate: 1_798_761_599_999,
      duration: 60,
      games: [
        {
          gameId: 42,
          betConstraints: {
            USD: { betAmount: '12345678901234567890.123456789', maxWinPerBet: 1000 },
            EUR: { betAmount: '0.10', maxWinPerBet: 250.5 },
          },
        },
        { gameId: 3, betConstraints: { GBP: { betAmount: 2, maxWinPerBet: '99.99' } } },
      ],
    };
    const response = await admin('POST', `/admin/v1/merchants/${merchant.id}/reward-configurations`, sent);
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    const created = JSON.parse(text);
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Welcome bonus',
      status: 'INACTIVE',
      rewardType: 'FREE_BET',
      numberOfFreeBets: 10,
      startDate: Date.parse('2026-01-01T00:00:00Z'),
      endDate: 1_798_761_599_999,
      duration: 60,
      merchantId: merchant.id,
      games: [
        { id: expect.stringMatching(UUID), gameId: 3, betConstraints: { GBP: { betAmount: 2, maxWinPerBet: 99.99 } } },
        {
          id: expect.stringMatching(UUID),
          gameId: 42,
          betConstraints: {
            EUR: { betAmount: 0.1, maxWinPerBet: 250.5 },
            USD: { betAmount: Number('12345678901234567890.123456789'), maxWinPerBet: 1000 },
          },
        },
      ],
    });
    // The decimal text went through untouched (JSON.parse above would have rounded it).
    expect(text).toMatch(/"betAmount"\s*:\s*12345678901234567890\.123456789\b/);
    expect(text).toMatch(/"betAmount"\s*:\s*0\.10\b/);

    const listed = await readAll(merchant);
    expect(listed.status).toBe(200);
    expect(await listed.text()).toBe(`[${text}]`);
    const row = await env.db
      .selectFrom('reward_configurations')
      .select(['external_id'])
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.external_id).toBe('cfg-ext-1');
  });

  it('accepts an ISO date without time, and no externalId', async () => {
    const merchant = await createMerchant();
    const response = await admin(
      'POST',
      `/admin/v1/merchants/${merchant.id}/reward-configurations`,
      configurationBody({ startDate: '2026-03-01', endDate: '2026-03-01' }),
    );
    expect(response.status).toBe(201);
    const created = await response.json();
    expect(created.startDate).toBe(Date.parse('2026-03-01T00:00:00Z'));
    expect(created.endDate).toBe(created.startDate);
    const row = await env.db
      .selectFrom('reward_configurations')
      .select('external_id')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.external_id).toBeNull();
  });
});

describe('rewards', () => {
  it('creates rewards in request order, in any state, and reads each back', async () => {
    const merchant = await createMerchant();
    const configuration = await createConfiguration(merchant.id);
    const other = await createConfiguration(merchant.id, { name: 'Other' });
    const sent = [
      { playerId: 'player-1', rewardConfigurationId: configuration.id, externalId: 'r-1' },
      { playerId: 'player-2', rewardConfigurationId: other.id.toUpperCase(), status: 'USED' },
      { playerId: 'player-1', rewardConfigurationId: configuration.id, externalId: 'r-3', status: 'EXPIRED' },
      { playerId: 'player-3', rewardConfigurationId: other.id, externalId: null, status: 'CANCELLED' },
    ];
    const response = await admin('POST', `/admin/v1/merchants/${merchant.id}/rewards`, { rewards: sent });
    expect(response.status).toBe(201);
    const { rewards } = await response.json();
    expect(rewards).toEqual([
      {
        id: expect.stringMatching(UUID),
        externalId: 'r-1',
        playerId: 'player-1',
        rewardConfigurationId: configuration.id,
        status: 'ACTIVE',
      },
      {
        id: expect.stringMatching(UUID),
        externalId: null,
        playerId: 'player-2',
        rewardConfigurationId: other.id,
        status: 'USED',
      },
      {
        id: expect.stringMatching(UUID),
        externalId: 'r-3',
        playerId: 'player-1',
        rewardConfigurationId: configuration.id,
        status: 'EXPIRED',
      },
      {
        id: expect.stringMatching(UUID),
        externalId: null,
        playerId: 'player-3',
        rewardConfigurationId: other.id,
        status: 'CANCELLED',
      },
    ]);
    expect(new Set(rewards.map((reward: { id: string }) => reward.id)).size).toBe(4);

    for (const created of rewards) {
      const read = await admin('GET', `/admin/v1/merchants/${merchant.id}/rewards/${created.id}`);
      expect(read.status).toBe(200);
      const body = await read.json();
      expect(body).toEqual({
        ...created,
        cancelledAt: created.status === 'CANCELLED' ? expect.any(Number) : null,
        cancellationJobId: null,
      });
    }
    const stored = await env.db
      .selectFrom('rewards')
      .select(['id', 'merchant_id', 'player_id', 'status'])
      .where('merchant_id', '=', merchant.id)
      .execute();
    expect(stored).toHaveLength(4);
  });

  it('creates 10,000 rewards in one request', async () => {
    const merchant = await createMerchant();
    const configuration = await createConfiguration(merchant.id);
    const sent = Array.from({ length: 10_000 }, (_, index) => ({
      playerId: `p${index % 100}`,
      rewardConfigurationId: configuration.id,
      externalId: `bulk-${index}`,
    }));
    const response = await admin('POST', `/admin/v1/merchants/${merchant.id}/rewards`, { rewards: sent });
    expect(response.status).toBe(201);
    const { rewards } = await response.json();
    expect(rewards).toHaveLength(10_000);
    expect(rewards[9_999]).toMatchObject({ externalId: 'bulk-9999', playerId: 'p99', status: 'ACTIVE' });
    const { count } = await env.db
      .selectFrom('rewards')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(10_000);
    // Ids map to the right rows.
    const last = await env.db
      .selectFrom('rewards')
      .select('external_id')
      .where('id', '=', rewards[9_999].id)
      .executeTakeFirstOrThrow();
    expect(last.external_id).toBe('bulk-9999');
  });
});

describe('sessions', () => {
  const bets = [
    {
      sportId: 'football',
      sportName: 'Football',
      betSlipId: 'slip-1',
      matchName: 'Red v Blue',
      matchId: 'm-1',
      competitionId: 'c-1',
      competitionName: 'League',
      marketId: 'mk-1',
      marketName: 'Total goals',
      marketOptionId: 'mo-1',
      marketOptionName: 'Over 2.5',
      odd: 1.85,
      margin: 2.5,
      homeTeam: 'Red',
      awayTeam: 'Blue',
    },
    {
      sportId: 'tennis',
      sportName: 'Tennis',
      matchName: 'A v B',
      matchId: 'm-2',
      competitionId: 'c-2',
      competitionName: 'Open',
      marketId: 'mk-2',
      marketName: 'Winner',
      marketOptionId: 'mo-2',
      marketOptionName: 'A',
      odd: 2.1,
      margin: null,
      homeTeam: 'A',
      awayTeam: 'B',
    },
  ];

  const betSlip = (merchant: MerchantCredentials, authToken: string) =>
    api.post('/betSlip', signedBody(merchant, { authToken }));

  it('creates a session that /betSlip validates, with every field sent', async () => {
    const merchant = await createMerchant();
    const expiresAt = Date.now() + HOUR_MS;
    const player = {
      username: 'jdoe',
      nickname: 'JD',
      firstName: 'John',
      lastName: 'Doe',
      gender: 'male',
      email: 'jdoe@example.com',
      phone: '+356 2123 4567',
      address: '1 Main Street',
      city: 'Valletta',
      country: 'MT',
      language: 'MLT',
      test: true,
    };
    const response = await admin('POST', `/admin/v1/merchants/${merchant.id}/sessions`, {
      authToken: 'session-token-full',
      playerId: 'player-full',
      currency: 'EUR',
      balance: '1234.56',
      expiresAt,
      player,
      ipAddress: '198.51.100.7',
      devicePlatform: 'mobile',
      betSlip: bets,
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ authToken: 'session-token-full', expiresAt });

    const slip = await betSlip(merchant, 'session-token-full');
    expect(slip.status).toBe(200);
    expect(await slip.json()).toEqual({
      playerId: 'player-full',
      balance: 1234.56,
      currency: 'EUR',
      ...player,
      ipAddress: '198.51.100.7',
      devicePlatform: 'mobile',
      betSlip: bets,
      errorCode: 0,
      errorMessage: '',
    });

    // Only the digest of the token is stored.
    const session = await env.db
      .selectFrom('sessions')
      .selectAll()
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    expect(session.token_digest.equals(createHash('sha256').update('session-token-full').digest())).toBe(true);
    expect(session.expires_at?.getTime()).toBe(expiresAt);
  });

  it('generates a token when none is given; defaults apply; balance 0 and no bets are fine', async () => {
    const merchant = await createMerchant();
    const response = await admin('POST', `/admin/v1/merchants/${merchant.id}/sessions`, {
      playerId: 'player-min',
      currency: 'USD',
      balance: 0,
    });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body).toEqual({ authToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresAt: null });
    const slip = await betSlip(merchant, body.authToken);
    expect(await slip.json()).toEqual({
      playerId: 'player-min',
      balance: 0,
      currency: 'USD',
      language: 'ENG',
      test: false,
      betSlip: [],
      errorCode: 0,
      errorMessage: '',
    });
  });

  it('updates the player and wallet of a later session, keeping fields left out', async () => {
    const merchant = await createMerchant();
    const first = await admin('POST', `/admin/v1/merchants/${merchant.id}/sessions`, {
      authToken: 'first-session',
      playerId: 'returning',
      currency: 'EUR',
      balance: 10,
      player: { username: 'ret', city: 'Rome', email: 'ret@example.com' },
    });
    expect(first.status).toBe(201);
    const second = await admin('POST', `/admin/v1/merchants/${merchant.id}/sessions`, {
      authToken: 'second-session',
      playerId: 'returning',
      currency: 'EUR',
      balance: 25.5,
      player: { city: 'Milan', email: null },
    });
    expect(second.status).toBe(201);
    // Both sessions share the wallet: the balance is the latest one.
    for (const token of ['first-session', 'second-session']) {
      const body = await (await betSlip(merchant, token)).json();
      expect(body).toMatchObject({ playerId: 'returning', balance: 25.5, username: 'ret', city: 'Milan' });
      expect(body).not.toHaveProperty('email');
    }
  });

  it('accepts an expiresAt in the past (an expired session) and an ISO string', async () => {
    const merchant = await createMerchant();
    const response = await admin('POST', `/admin/v1/merchants/${merchant.id}/sessions`, {
      authToken: 'expired-session',
      playerId: 'late',
      currency: 'EUR',
      balance: 1,
      expiresAt: '2020-01-01T00:00:00.000Z',
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      authToken: 'expired-session',
      expiresAt: Date.parse('2020-01-01T00:00:00.000Z'),
    });
    expect(await (await betSlip(merchant, 'expired-session')).json()).toEqual({
      errorCode: 9,
      errorMessage: 'Token expired',
    });
  });
});

describe('jobs', () => {
  it('shows a queued job of any merchant, with its merchantId', async () => {
    const merchant = await createMerchant();
    const cancel = await api.post(
      '/api/v1/integration/rewards/cancel',
      signedBody(merchant, { externalId: 'some-reward' }),
    );
    expect(cancel.status).toBe(200);
    const jobId = cancel.headers.get('x-job-id') as string;
    expect(jobId).toMatch(UUID);

    const response = await admin('GET', `/admin/v1/jobs/${jobId}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      jobId,
      merchantId: merchant.id,
      operation: 'cancel',
      state: 'queued',
      createdAt: expect.any(Number),
      startedAt: null,
      finishedAt: null,
      progress: 0,
      result: null,
      error: null,
    });
  });

  it('shows a finished job from the audit table once Redis has forgotten it', async () => {
    const merchant = await createMerchant();
    const jobId = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    const createdAt = new Date('2026-11-01T10:00:00Z');
    await recordJobsFinished(env.db, [
      {
        id: jobId,
        merchantId: merchant.id,
        operation: 'bulkCancel',
        createdAt,
        state: 'completed',
        counts: { requested: 5, cancelled: 3, alreadyCancelled: 1, notCancellable: 0, notFound: 1 },
        startedAt: new Date('2026-11-01T10:00:01Z'),
        finishedAt: new Date('2026-11-01T10:00:02Z'),
      },
    ]);
    const response = await admin('GET', `/admin/v1/jobs/${jobId}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      jobId,
      merchantId: merchant.id,
      operation: 'bulkCancel',
      state: 'completed',
      createdAt: createdAt.getTime(),
      startedAt: Date.parse('2026-11-01T10:00:01Z'),
      finishedAt: Date.parse('2026-11-01T10:00:02Z'),
      progress: 100,
      result: { requested: 5, cancelled: 3, alreadyCancelled: 1, notCancellable: 0, notFound: 1 },
      error: null,
    });
  });
});
