import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/test-context.js';

const { env, api } = useTestContext({ api: true });
let merchantId: string;
let configurationId: string;
/** A configuration of another merchant. */
let foreignConfigurationId: string;

const UNKNOWN_MERCHANT = '00000000-0000-4000-8000-000000000000';
const DAY_MS = 24 * 60 * 60 * 1000;

/** fetch's Response with its JSON body typed loosely, for assertions. */
type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

async function admin(method: string, path: string, body?: unknown): Promise<JsonResponse> {
  return fetch(`${api.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function created<T>(response: Promise<JsonResponse>): Promise<T> {
  const answer = await response;
  expect(answer.status).toBe(201);
  return (await answer.json()) as T;
}

/** A 400 INVALID_REQUEST whose message matches `message`. */
async function expectInvalidMessage(response: Promise<JsonResponse>, message: RegExp): Promise<string> {
  const answer = await response;
  const body = await answer.json();
  expect({ status: answer.status, errorCode: body.errorCode }).toEqual({ status: 400, errorCode: 1 });
  expect(body.errorMessage).toMatch(message);
  return body.errorMessage;
}

/** A 400 INVALID_REQUEST naming exactly `field` (`field: reason`), the reason matching `why` when given. */
async function expectInvalid(response: Promise<JsonResponse>, field: string, why: RegExp = /./): Promise<void> {
  const message = await expectInvalidMessage(response, why);
  expect(message.split(': ')[0]).toBe(field);
}

async function expectNotFound(response: Promise<JsonResponse>, message: string): Promise<void> {
  const answer = await response;
  expect(answer.status).toBe(404);
  expect(await answer.json()).toEqual({ errorCode: 10, errorMessage: message });
}

const configurationBody = (fields: Record<string, unknown> = {}) => ({
  name: 'Config',
  status: 'ACTIVE',
  rewardType: 'FREE_BET',
  numberOfFreeBets: 3,
  startDate: 1_767_225_600_000,
  endDate: 1_769_904_000_000,
  duration: 60,
  games: [{ gameId: 1, betConstraints: { EUR: { betAmount: 1, maxWinPerBet: 10 } } }],
  ...fields,
});

const game = (betConstraints: unknown, gameId: unknown = 1) => ({ games: [{ gameId, betConstraints }] });

const sessionBody = (fields: Record<string, unknown> = {}) => ({
  playerId: 'player',
  currency: 'EUR',
  balance: 10,
  ...fields,
});

const bet = (fields: Record<string, unknown> = {}) => ({
  sportId: 's',
  sportName: 'S',
  matchName: 'M',
  matchId: 'm',
  competitionId: 'c',
  competitionName: 'C',
  marketId: 'mk',
  marketName: 'MK',
  marketOptionId: 'mo',
  marketOptionName: 'MO',
  odd: 1.5,
  margin: null,
  homeTeam: 'H',
  awayTeam: 'A',
  ...fields,
});

beforeAll(async () => {
  merchantId = (await created<{ id: string }>(admin('POST', '/admin/v1/merchants', { name: 'Main' }))).id;
  configurationId = (
    await created<{ id: string }>(
      admin(
        'POST',
        `/admin/v1/merchants/${merchantId}/reward-configurations`,
        configurationBody({ externalId: 'cfg-1' }),
      ),
    )
  ).id;
  const other = (await created<{ id: string }>(admin('POST', '/admin/v1/merchants', { name: 'Other' }))).id;
  foreignConfigurationId = (
    await created<{ id: string }>(
      admin('POST', `/admin/v1/merchants/${other}/reward-configurations`, configurationBody()),
    )
  ).id;
});

describe('any admin route', () => {
  it('refuses malformed JSON', async () => {
    await expectInvalidMessage(admin('POST', '/admin/v1/merchants', '{"name": '), /^Malformed JSON/);
  });

  it('refuses a body that is not an object, and unknown fields', async () => {
    await expectInvalidMessage(admin('POST', '/admin/v1/merchants', '[]'), /expected object/);
    await expectInvalidMessage(
      admin('POST', '/admin/v1/merchants', { name: 'x', colour: 'red' }),
      /^Unrecognized key: "colour"/,
    );
  });

  it('refuses a merchantId that is not a UUID', async () => {
    await expectInvalid(admin('PATCH', '/admin/v1/merchants/not-a-uuid', {}), 'merchantId');
    await expectInvalid(admin('POST', '/admin/v1/merchants/42/secret-rotations', {}), 'merchantId');
    await expectInvalid(
      admin('POST', '/admin/v1/merchants/42/reward-configurations', configurationBody()),
      'merchantId',
    );
    await expectInvalid(admin('POST', '/admin/v1/merchants/42/rewards', { rewards: [] }), 'merchantId');
    await expectInvalid(admin('GET', `/admin/v1/merchants/42/rewards/${UNKNOWN_MERCHANT}`), 'merchantId');
    await expectInvalid(admin('POST', '/admin/v1/merchants/42/sessions', sessionBody()), 'merchantId');
  });

  it('answers 404 for an unknown merchant on every merchant route', async () => {
    const base = `/admin/v1/merchants/${UNKNOWN_MERCHANT}`;
    await expectNotFound(admin('PATCH', base, { status: 'DISABLED' }), 'Merchant not found');
    await expectNotFound(admin('POST', `${base}/secret-rotations`, {}), 'Merchant not found');
    await expectNotFound(admin('POST', `${base}/reward-configurations`, configurationBody()), 'Merchant not found');
    await expectNotFound(
      admin('POST', `${base}/rewards`, { rewards: [{ playerId: 'p', rewardConfigurationId: configurationId }] }),
      'Merchant not found',
    );
    await expectNotFound(admin('POST', `${base}/sessions`, sessionBody()), 'Merchant not found');
    await expectNotFound(admin('GET', `${base}/rewards/${UNKNOWN_MERCHANT}`), 'Reward not found');
  });
});

describe('merchants', () => {
  it('validates name, secretKey and allowedIps', async () => {
    await expectInvalid(admin('POST', '/admin/v1/merchants', {}), 'name');
    await expectInvalid(admin('POST', '/admin/v1/merchants', { name: '' }), 'name');
    await expectInvalid(admin('POST', '/admin/v1/merchants', { name: 'x'.repeat(256) }), 'name');
    await expectInvalid(admin('POST', '/admin/v1/merchants', { name: 'm', secretKey: '0123456789abcde' }), 'secretKey');
    // At least 32 characters: 31 is refused.
    await expectInvalid(admin('POST', '/admin/v1/merchants', { name: 'm', secretKey: 'x'.repeat(31) }), 'secretKey');
    await expectInvalid(
      admin('POST', '/admin/v1/merchants', { name: 'm', allowedIps: ['not-an-ip'] }),
      'allowedIps[0]',
    );
    await expectInvalid(
      admin('POST', '/admin/v1/merchants', { name: 'm', allowedIps: ['10.0.0.1', '10.0.0.0/33'] }),
      'allowedIps[1]',
    );
    await expectInvalid(admin('POST', '/admin/v1/merchants', { name: 'm', allowedIps: [] }), 'allowedIps');
    await expectInvalid(admin('POST', '/admin/v1/merchants', { name: 'm', allowedIps: '10.0.0.1' }), 'allowedIps');
  });

  it('validates a PATCH', async () => {
    await expectInvalid(admin('PATCH', `/admin/v1/merchants/${merchantId}`, { status: 'PAUSED' }), 'status');
    await expectInvalid(
      admin('PATCH', `/admin/v1/merchants/${merchantId}`, { allowedIps: ['::1/129'] }),
      'allowedIps[0]',
    );
    await expectInvalidMessage(
      admin('PATCH', `/admin/v1/merchants/${merchantId}`, { name: 'renamed' }),
      /^Unrecognized key: "name"/,
    );
    const row = await env.db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'ACTIVE', allowed_ips: null, name: 'Main' });
  });

  it('takes quotas only as positive whole numbers (or null), and keeps the old values on refusal', async () => {
    const path = `/admin/v1/merchants/${merchantId}`;
    expect((await admin('PATCH', path, { maxQueuedJobs: 7, rateLimitPerSecond: 9 })).status).toBe(200);
    for (const field of ['maxQueuedJobs', 'rateLimitPerSecond']) {
      for (const value of [0, -1, 1.5, '5', true, 2_147_483_648]) {
        await expectInvalid(admin('PATCH', path, { [field]: value }), field);
      }
    }
    const row = await env.db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ max_queued_jobs: 7, rate_limit_per_second: 9 });
    // The database holds the same rule, whoever writes the row.
    await expect(
      env.db.updateTable('merchants').set({ max_queued_jobs: 0 }).where('id', '=', merchantId).execute(),
    ).rejects.toThrow(/max_queued_jobs_check/);
    expect((await admin('PATCH', path, { maxQueuedJobs: null, rateLimitPerSecond: null })).status).toBe(200);
  });

  it('takes signatureVersion only as 1 or 2, and keeps the old value on refusal', async () => {
    const path = `/admin/v1/merchants/${merchantId}`;
    for (const value of [0, 3, '2', 2.5, null, true]) {
      await expectInvalid(admin('PATCH', path, { signatureVersion: value }), 'signatureVersion');
    }
    const row = await env.db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirstOrThrow();
    expect(row.signature_version).toBe(1);
    // The database holds the same rule, whoever writes the row.
    await expect(
      env.db
        .updateTable('merchants')
        .set({ signature_version: 3 as never })
        .where('id', '=', merchantId)
        .execute(),
    ).rejects.toThrow(/signature_version_check/);
  });

  it('keeps previousValidForMs within 0 to 30 days', async () => {
    const path = `/admin/v1/merchants/${merchantId}/secret-rotations`;
    const before = await env.db
      .selectFrom('merchants')
      .selectAll()
      .where('id', '=', merchantId)
      .executeTakeFirstOrThrow();
    await expectInvalid(admin('POST', path, { previousValidForMs: -1 }), 'previousValidForMs');
    await expectInvalid(admin('POST', path, { previousValidForMs: 30 * DAY_MS + 1 }), 'previousValidForMs');
    await expectInvalid(admin('POST', path, { previousValidForMs: 1.5 }), 'previousValidForMs');
    await expectInvalid(admin('POST', path, { previousValidForMs: '1000' }), 'previousValidForMs');
    const after = await env.db
      .selectFrom('merchants')
      .selectAll()
      .where('id', '=', merchantId)
      .executeTakeFirstOrThrow();
    expect(after.secret_key).toBe(before.secret_key);
  });
});

describe('reward configurations', () => {
  const post = (body: unknown) => admin('POST', `/admin/v1/merchants/${merchantId}/reward-configurations`, body);

  it('requires dates in order, as epoch ms or ISO-8601', async () => {
    await expectInvalid(post(configurationBody({ startDate: 2_000, endDate: 1_999 })), 'endDate', /before startDate/);
    await expectInvalid(post(configurationBody({ startDate: 'yesterday' })), 'startDate', /ISO-8601/);
    await expectInvalid(post(configurationBody({ endDate: 1.5 })), 'endDate');
    await expectInvalid(post(configurationBody({ startDate: -1 })), 'startDate');
    await expectInvalid(post(configurationBody({ endDate: undefined })), 'endDate');
  });

  it('requires known enum values', async () => {
    await expectInvalid(post(configurationBody({ status: 'DRAFT' })), 'status');
    await expectInvalid(post(configurationBody({ rewardType: 'CASH' })), 'rewardType');
  });

  it('requires positive counts and a name', async () => {
    await expectInvalid(post(configurationBody({ numberOfFreeBets: 0 })), 'numberOfFreeBets');
    await expectInvalid(post(configurationBody({ numberOfFreeBets: 2.5 })), 'numberOfFreeBets');
    await expectInvalid(post(configurationBody({ duration: 0 })), 'duration');
    await expectInvalid(post(configurationBody({ name: '' })), 'name');
    await expectInvalid(post(configurationBody({ externalId: '' })), 'externalId');
  });

  it('validates games and bet constraints', async () => {
    await expectInvalid(post(configurationBody({ games: [] })), 'games');
    await expectInvalid(
      post(configurationBody(game({ EUR: { betAmount: 1, maxWinPerBet: 1 } }, 0))),
      'games[0].gameId',
    );
    await expectInvalid(
      post(configurationBody(game({ EUR: { betAmount: 1, maxWinPerBet: 1 } }, 1.5))),
      'games[0].gameId',
    );
    const constraints = { EUR: { betAmount: 1, maxWinPerBet: 1 } };
    await expectInvalid(
      post(
        configurationBody({
          games: [
            { gameId: 5, betConstraints: constraints },
            { gameId: 5, betConstraints: constraints },
          ],
        }),
      ),
      'games[1].gameId',
      /duplicate/,
    );
    await expectInvalid(post(configurationBody(game({}))), 'games[0].betConstraints', /at least one currency/);
    await expectInvalid(
      post(configurationBody(game({ eur: { betAmount: 1, maxWinPerBet: 1 } }))),
      'games[0].betConstraints.eur',
      /three capital letters/,
    );
    await expectInvalid(
      post(configurationBody(game({ EURO: { betAmount: 1, maxWinPerBet: 1 } }))),
      'games[0].betConstraints.EURO',
    );
  });

  it('requires positive decimal amounts', async () => {
    const amounts = (betAmount: unknown, maxWinPerBet: unknown = 1) =>
      post(configurationBody(game({ EUR: { betAmount, maxWinPerBet } })));
    await expectInvalid(amounts(0), 'games[0].betConstraints.EUR.betAmount', /greater than 0/);
    await expectInvalid(amounts(-1), 'games[0].betConstraints.EUR.betAmount', /greater than 0/);
    await expectInvalid(amounts('0.000'), 'games[0].betConstraints.EUR.betAmount', /greater than 0/);
    await expectInvalid(amounts('-2.5'), 'games[0].betConstraints.EUR.betAmount', /greater than 0/);
    await expectInvalid(amounts('abc'), 'games[0].betConstraints.EUR.betAmount', /decimal/);
    await expectInvalid(amounts('1e5'), 'games[0].betConstraints.EUR.betAmount', /decimal/);
    await expectInvalid(amounts(1, 0), 'games[0].betConstraints.EUR.maxWinPerBet', /greater than 0/);
    await expectInvalid(amounts(1, null), 'games[0].betConstraints.EUR.maxWinPerBet');
  });

  it('refuses an externalId the merchant already uses, and writes nothing', async () => {
    const count = async () =>
      Number(
        (
          await env.db
            .selectFrom('reward_configurations')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    await expectInvalid(post(configurationBody({ externalId: 'cfg-1' })), 'externalId', /already/);
    expect(await count()).toBe(before);
    const games = await env.db.selectFrom('game_reward_configurations').select('id').execute();
    expect(games).toHaveLength(before);
  });
});

describe('rewards', () => {
  const post = (rewards: unknown) => admin('POST', `/admin/v1/merchants/${merchantId}/rewards`, { rewards });
  const reward = (fields: Record<string, unknown> = {}) => ({
    playerId: 'p1',
    rewardConfigurationId: configurationId,
    ...fields,
  });
  const rewardCount = async () =>
    Number(
      (
        await env.db
          .selectFrom('rewards')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('requires 1 to 10,000 rewards', async () => {
    await expectInvalid(post([]), 'rewards');
    await expectInvalid(admin('POST', `/admin/v1/merchants/${merchantId}/rewards`, {}), 'rewards');
    await expectInvalid(post(Array.from({ length: 10_001 }, () => reward())), 'rewards', /10000/);
    expect(await rewardCount()).toBe(0);
  });

  it('validates each entry, naming its index', async () => {
    await expectInvalid(post([reward(), reward({ playerId: '' })]), 'rewards[1].playerId');
    await expectInvalid(post([reward({ playerId: 'x'.repeat(256) })]), 'rewards[0].playerId');
    await expectInvalid(
      post([reward(), reward(), reward({ rewardConfigurationId: 'nope' })]),
      'rewards[2].rewardConfigurationId',
    );
    await expectInvalid(post([reward({ status: 'PENDING' })]), 'rewards[0].status');
    await expectInvalid(post([reward({ externalId: '' })]), 'rewards[0].externalId');
    expect(await rewardCount()).toBe(0);
  });

  it('requires configurations of this merchant', async () => {
    const answer = await post([reward(), reward(), reward(), reward({ rewardConfigurationId: UNKNOWN_MERCHANT })]);
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({
      errorCode: 1,
      errorMessage: 'rewards[3].rewardConfigurationId: unknown configuration',
    });
    const foreign = await post([reward({ rewardConfigurationId: foreignConfigurationId })]);
    expect(await foreign.json()).toEqual({
      errorCode: 1,
      errorMessage: 'rewards[0].rewardConfigurationId: unknown configuration',
    });
    expect(await rewardCount()).toBe(0);
  });

  it('refuses duplicate externalIds, in the request or already stored', async () => {
    await expectInvalid(
      post([reward({ externalId: 'a' }), reward({ externalId: 'b' }), reward({ externalId: 'a' })]),
      'rewards[2].externalId',
      /duplicate/,
    );
    expect(await rewardCount()).toBe(0);
    expect((await post([reward({ externalId: 'taken' })])).status).toBe(201);
    await expectInvalid(
      post([reward({ externalId: 'fresh' }), reward({ externalId: 'taken' })]),
      'rewards[1].externalId',
      /already has a reward/,
    );
    expect(await rewardCount()).toBe(1);
  });

  it('answers 400 for a rewardId that is not a UUID, 404 for an unknown one', async () => {
    await expectInvalid(admin('GET', `/admin/v1/merchants/${merchantId}/rewards/123`), 'rewardId');
    await expectNotFound(
      admin('GET', `/admin/v1/merchants/${merchantId}/rewards/${UNKNOWN_MERCHANT}`),
      'Reward not found',
    );
  });
});

describe('sessions', () => {
  const post = (body: unknown) => admin('POST', `/admin/v1/merchants/${merchantId}/sessions`, body);

  it('validates currency, balance and expiresAt', async () => {
    await expectInvalid(post(sessionBody({ currency: 'eur' })), 'currency');
    await expectInvalid(post(sessionBody({ currency: 'EURO' })), 'currency');
    await expectInvalid(post(sessionBody({ balance: -0.01 })), 'balance', /not be negative/);
    await expectInvalid(post(sessionBody({ balance: '-5' })), 'balance', /not be negative/);
    await expectInvalid(post(sessionBody({ balance: 'lots' })), 'balance', /decimal/);
    await expectInvalid(post(sessionBody({ balance: undefined })), 'balance');
    await expectInvalid(post(sessionBody({ expiresAt: 'tomorrow' })), 'expiresAt', /ISO-8601/);
    await expectInvalid(post(sessionBody({ playerId: '' })), 'playerId');
    await expectInvalid(post(sessionBody({ authToken: '' })), 'authToken');
  });

  it('validates player fields, ipAddress and devicePlatform', async () => {
    await expectInvalid(post(sessionBody({ player: { gender: 'g'.repeat(33) } })), 'player.gender');
    await expectInvalid(post(sessionBody({ devicePlatform: 'd'.repeat(33) })), 'devicePlatform');
    await expectInvalid(post(sessionBody({ ipAddress: 'not-an-ip' })), 'ipAddress');
    await expectInvalid(post(sessionBody({ player: { language: 'English' } })), 'player.language');
    await expectInvalid(post(sessionBody({ player: { country: 'Malta' } })), 'player.country');
    await expectInvalid(post(sessionBody({ player: { test: 'yes' } })), 'player.test');
    await expectInvalid(
      post(sessionBody({ player: { nickname: 'n', shoeSize: 44 } })),
      'player',
      /Unrecognized key: "shoeSize"/,
    );
  });

  it('validates bet slip items', async () => {
    await expectInvalid(post(sessionBody({ betSlip: [bet(), bet({ odd: 0 })] })), 'betSlip[1].odd');
    await expectInvalid(post(sessionBody({ betSlip: [bet({ odd: undefined })] })), 'betSlip[0].odd');
    await expectInvalid(post(sessionBody({ betSlip: [bet({ matchId: undefined })] })), 'betSlip[0].matchId');
    await expectInvalid(post(sessionBody({ betSlip: [bet({ margin: 'wide' })] })), 'betSlip[0].margin');
    await expectInvalid(post(sessionBody({ betSlip: bet() })), 'betSlip');
  });

  it('refuses an authToken already in use, and leaves nothing behind', async () => {
    expect((await post(sessionBody({ authToken: 'shared-token' }))).status).toBe(201);
    await expectInvalid(
      post(sessionBody({ authToken: 'shared-token', playerId: 'newcomer', betSlip: [bet()] })),
      'authToken',
      /already/,
    );
    // The transaction rolled back: the newcomer's player and wallet rows are gone with it.
    const players = await env.db
      .selectFrom('players')
      .select('player_id')
      .where('player_id', '=', 'newcomer')
      .execute();
    const wallets = await env.db
      .selectFrom('wallets')
      .select('player_id')
      .where('player_id', '=', 'newcomer')
      .execute();
    expect({ players, wallets }).toEqual({ players: [], wallets: [] });
  });
});

describe('jobs', () => {
  it('answers 404 for an unknown job id, well-formed or not', async () => {
    await expectNotFound(admin('GET', `/admin/v1/jobs/${UNKNOWN_MERCHANT}`), 'Job not found');
    await expectNotFound(admin('GET', '/admin/v1/jobs/not-a-job'), 'Job not found');
  });
});
