import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ConfigurationFixture,
  type ConfigurationView,
  createConfiguration,
  createMerchant,
  type MerchantFixture,
} from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/** docs/design.md §7: readAll answers the merchant's own configurations, filtered, ordered and paged. */

const READ_ALL = '/api/v1/integration/reward-configurations/readAll';
const DAY = 24 * 60 * 60 * 1000;
const base = Date.UTC(2026, 0, 1);

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;
let other: MerchantFixture;
let empty: MerchantFixture;
/** The merchant's configurations, by a short name. */
const configs: Record<string, ConfigurationFixture> = {};
let othersConfig: ConfigurationFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
  empty = await createMerchant(env.db);
  const m = merchant.id;
  const specs = {
    summer: { name: 'Summer Free Bets', status: 'ACTIVE', startDate: base + 5 * DAY },
    winter: { name: 'WINTER free bets', status: 'INACTIVE', startDate: base + 3 * DAY },
    percent: { name: '100% Bonus', status: 'ACTIVE', startDate: base + 1 * DAY },
    underscore: { name: 'free_bet_x', status: 'INACTIVE', startDate: base + 2 * DAY },
    lookalike: { name: 'freeXbetXy', status: 'ACTIVE', startDate: base + 2 * DAY },
    sameDay1: { name: 'Tie A', status: 'ACTIVE', startDate: base + 4 * DAY },
    sameDay2: { name: 'Tie B', status: 'ACTIVE', startDate: base + 4 * DAY },
    sameDay3: { name: 'Tie C', status: 'ACTIVE', startDate: base + 4 * DAY },
  } as const;
  for (const [key, spec] of Object.entries(specs)) {
    configs[key] = await createConfiguration(env.db, { merchantId: m, ...spec });
  }
  // Another merchant's configuration that every filter above would match.
  othersConfig = await createConfiguration(env.db, {
    merchantId: other.id,
    name: 'Summer Free Bets % _ 100%',
    status: 'ACTIVE',
    startDate: base + 10 * DAY,
  });
});

async function readAll(
  fields: Record<string, unknown> = {},
  as: MerchantFixture = merchant,
): Promise<{ response: Response; body: ConfigurationView[] }> {
  const response = await api.post(READ_ALL, signedBody(as, fields));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return { response, body: (await response.json()) as ConfigurationView[] };
}

/** The merchant's configurations in the documented order: startDate descending, then id ascending. */
function inOrder(...keys: string[]): ConfigurationView[] {
  return keys
    .map((key) => (configs[key] as ConfigurationFixture).view)
    .sort((a, b) => b.startDate - a.startDate || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const allKeys = () => Object.keys(configs);
const names = (body: ConfigurationView[]) => body.map((c) => c.name);

describe('every field', () => {
  it('shows a configuration exactly as it was created', async () => {
    const owner = await createMerchant(env.db);
    const created = await createConfiguration(env.db, {
      merchantId: owner.id,
      externalId: 'ext-config-1',
      name: 'Weekend Boost',
      status: 'INACTIVE',
      rewardType: 'FREE_BET',
      numberOfFreeBets: 7,
      startDate: Date.UTC(2026, 5, 1, 12, 30, 15, 123),
      endDate: Date.UTC(2026, 6, 1, 0, 0, 0, 999),
      duration: 2_880,
      // Not in gameId order: the answer must sort them.
      games: [
        {
          gameId: 42,
          betConstraints: {
            USD: { betAmount: '0.20', maxWinPerBet: '1000' },
            EUR: { betAmount: '0.10', maxWinPerBet: '250.50' },
          },
        },
        { gameId: 7, betConstraints: { GBP: { betAmount: '5', maxWinPerBet: '12345.678' } } },
      ],
    });
    const [game42, game7] = await env.db
      .selectFrom('game_reward_configurations')
      .select(['id', 'game_id'])
      .where('reward_configuration_id', '=', created.id)
      .orderBy('game_id', 'desc')
      .execute();

    const { body } = await readAll({}, owner);
    expect(body).toEqual([
      {
        id: created.id,
        name: 'Weekend Boost',
        status: 'INACTIVE',
        rewardType: 'FREE_BET',
        numberOfFreeBets: 7,
        startDate: 1780317015123,
        endDate: 1782864000999,
        duration: 2_880,
        merchantId: owner.id,
        games: [
          { id: game7?.id, gameId: 7, betConstraints: { GBP: { betAmount: 5, maxWinPerBet: 12345.678 } } },
          {
            id: game42?.id,
            gameId: 42,
            betConstraints: {
              EUR: { betAmount: 0.1, maxWinPerBet: 250.5 },
              USD: { betAmount: 0.2, maxWinPerBet: 1000 },
            },
          },
        ],
      },
    ]);
    // Exactly these keys: no externalId, created_at or other column leaks into the answer.
    expect(Object.keys(body[0] as object).sort()).toEqual(
      [
        'duration',
        'endDate',
        'games',
        'id',
        'merchantId',
        'name',
        'numberOfFreeBets',
        'rewardType',
        'startDate',
        'status',
      ].sort(),
    );
  });

  it('writes dates as JSON integers and amounts as JSON numbers, never strings', async () => {
    const owner = await createMerchant(env.db);
    await createConfiguration(env.db, {
      merchantId: owner.id,
      startDate: Date.UTC(2026, 1, 2, 3, 4, 5, 6),
      games: [{ gameId: 1, betConstraints: { EUR: { betAmount: '0.10', maxWinPerBet: '250.50' } } }],
    });
    const response = await api.post(READ_ALL, signedBody(owner));
    const text = await response.text();
    expect(text).toMatch(/"startDate"\s*:\s*1770001445006\s*[,}]/);
    expect(text).not.toMatch(/"(startDate|endDate)"\s*:\s*"/);
    expect(text).not.toMatch(/"(startDate|endDate)"\s*:\s*\d+\.\d/);
    expect(text).toMatch(/"betAmount"\s*:\s*0\.10?\s*[,}]/);
    expect(text).toMatch(/"maxWinPerBet"\s*:\s*250\.50?\s*[,}]/);
    const [config] = JSON.parse(text) as ConfigurationView[];
    expect(Number.isInteger(config?.startDate)).toBe(true);
    expect(config?.games[0]?.betConstraints.EUR).toEqual({ betAmount: 0.1, maxWinPerBet: 250.5 });
  });

  it('carries amounts through without rounding them on the way', async () => {
    const owner = await createMerchant(env.db);
    await createConfiguration(env.db, {
      merchantId: owner.id,
      startDate: base,
      games: [
        {
          gameId: 1,
          betConstraints: { EUR: { betAmount: '0.123456789012345678', maxWinPerBet: '98765432109876543.21' } },
        },
      ],
    });
    const text = await (await api.post(READ_ALL, signedBody(owner))).text();
    // More digits than a double holds: only text passed through untouched keeps them all.
    expect(text).toMatch(/"betAmount"\s*:\s*0\.123456789012345678\s*[,}]/);
    expect(text).toMatch(/"maxWinPerBet"\s*:\s*98765432109876543\.21\s*[,}]/);
  });

  it('keys betConstraints by currency code and shows a game without constraints as {}', async () => {
    const owner = await createMerchant(env.db);
    await createConfiguration(env.db, {
      merchantId: owner.id,
      startDate: base,
      games: [
        {
          gameId: 3,
          betConstraints: {
            EUR: { betAmount: '1', maxWinPerBet: '10' },
            SEK: { betAmount: '10', maxWinPerBet: '100' },
            JPY: { betAmount: '150', maxWinPerBet: '15000' },
          },
        },
        { gameId: 4, betConstraints: {} },
      ],
    });
    const { body } = await readAll({}, owner);
    const [withConstraints, without] = body[0]?.games ?? [];
    expect(Object.keys(withConstraints?.betConstraints ?? {}).sort()).toEqual(['EUR', 'JPY', 'SEK']);
    expect(withConstraints?.betConstraints.JPY).toEqual({ betAmount: 150, maxWinPerBet: 15000 });
    expect(without).toEqual({ id: expect.any(String), gameId: 4, betConstraints: {} });
  });

  it('shows a configuration without games with games: []', async () => {
    const owner = await createMerchant(env.db);
    const created = await createConfiguration(env.db, { merchantId: owner.id, startDate: base, games: [] });
    const { body } = await readAll({}, owner);
    expect(body).toEqual([{ ...created.view, games: [] }]);
  });

  it('orders games by gameId', async () => {
    const owner = await createMerchant(env.db);
    const gameIds = [500, 3, 77, 1, 1000, 20];
    await createConfiguration(env.db, {
      merchantId: owner.id,
      startDate: base,
      games: gameIds.map((gameId) => ({ gameId, betConstraints: { EUR: { betAmount: '1', maxWinPerBet: '2' } } })),
    });
    const { body } = await readAll({}, owner);
    expect(body[0]?.games.map((game) => game.gameId)).toEqual([1, 3, 20, 77, 500, 1000]);
  });
});

describe('scope', () => {
  it('answers all of the merchant configurations when no filter is given', async () => {
    const { body } = await readAll();
    expect(body).toEqual(inOrder(...allKeys()));
  });

  it('never shows another merchant configurations', async () => {
    const { body } = await readAll({ name: 'Summer' });
    expect(body.map((c) => c.id)).not.toContain(othersConfig.id);
    expect(body.every((c) => c.merchantId === merchant.id)).toBe(true);
    const { body: theirs } = await readAll({}, other);
    expect(theirs).toEqual([othersConfig.view]);
  });

  it('answers [] to a merchant without configurations', async () => {
    const response = await api.post(READ_ALL, signedBody(empty));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('[]');
  });
});

describe('order', () => {
  it('orders by startDate descending, then by id ascending', async () => {
    const { body } = await readAll();
    const expected = inOrder(...allKeys());
    expect(body.map((c) => c.id)).toEqual(expected.map((c) => c.id));
    // The three configurations sharing a start date are in id order.
    const ties = body.filter((c) => c.name.startsWith('Tie '));
    expect(ties.map((c) => c.id)).toEqual(ties.map((c) => c.id).sort());
    for (let i = 1; i < body.length; i++) {
      expect((body[i - 1] as ConfigurationView).startDate).toBeGreaterThanOrEqual(
        (body[i] as ConfigurationView).startDate,
      );
    }
  });
});

describe('filters', () => {
  it('matches a name substring, whatever its case', async () => {
    expect(names((await readAll({ name: 'free bets' })).body)).toEqual(['Summer Free Bets', 'WINTER free bets']);
    expect(names((await readAll({ name: 'FREE BETS' })).body)).toEqual(['Summer Free Bets', 'WINTER free bets']);
    expect(names((await readAll({ name: 'ummer' })).body)).toEqual(['Summer Free Bets']);
    expect(names((await readAll({ name: 'Summer Free Bets' })).body)).toEqual(['Summer Free Bets']);
  });

  it('takes % literally', async () => {
    expect((await readAll({ name: '%' })).body).toEqual(inOrder('percent'));
    expect((await readAll({ name: '0% B' })).body).toEqual(inOrder('percent'));
    expect((await readAll({ name: 'Summer%Bets' })).body).toEqual([]);
  });

  it('takes _ literally', async () => {
    expect((await readAll({ name: 'free_bet' })).body).toEqual(inOrder('underscore'));
    expect((await readAll({ name: '_' })).body).toEqual(inOrder('underscore'));
  });

  it('takes a backslash literally', async () => {
    expect((await readAll({ name: '\\' })).body).toEqual([]);
    expect((await readAll({ name: 'free\\_bet' })).body).toEqual([]);
  });

  it('filters by exact status', async () => {
    expect((await readAll({ status: 'INACTIVE' })).body).toEqual(inOrder('winter', 'underscore'));
    expect((await readAll({ status: 'ACTIVE' })).body).toEqual(
      inOrder('summer', 'percent', 'lookalike', 'sameDay1', 'sameDay2', 'sameDay3'),
    );
  });

  it('filters by reward type', async () => {
    expect((await readAll({ rewardType: 'FREE_BET' })).body).toEqual(inOrder(...allKeys()));
  });

  it('combines filters with AND', async () => {
    expect((await readAll({ name: 'free', status: 'INACTIVE' })).body).toEqual(inOrder('winter', 'underscore'));
    expect((await readAll({ name: 'free bets', status: 'ACTIVE', rewardType: 'FREE_BET' })).body).toEqual(
      inOrder('summer'),
    );
  });

  it('treats a filter sent as null as absent (clients that serialise every field)', async () => {
    const { response, body } = await readAll({ name: null, status: null, rewardType: null, limit: null, offset: null });
    expect(body).toEqual(inOrder(...allKeys()));
    expect(response.headers.get('x-total-count')).toBeNull();
  });

  it('ignores fields it does not know', async () => {
    expect((await readAll({ colour: 'blue', status: 'INACTIVE' })).body).toEqual(inOrder('winter', 'underscore'));
  });

  it('answers [] when nothing matches', async () => {
    const response = await api.post(READ_ALL, signedBody(merchant, { name: 'no configuration is called this' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });
});

describe('paging', () => {
  it('pages with limit and offset, and gives the number of matches in X-Total-Count', async () => {
    const all = inOrder(...allKeys());
    const first = await readAll({ limit: 3 });
    expect(first.body).toEqual(all.slice(0, 3));
    expect(first.response.headers.get('x-total-count')).toBe(String(all.length));
    const second = await readAll({ limit: 3, offset: 3 });
    expect(second.body).toEqual(all.slice(3, 6));
    expect(second.response.headers.get('x-total-count')).toBe(String(all.length));
    const last = await readAll({ limit: 3, offset: 6 });
    expect(last.body).toEqual(all.slice(6));
  });

  it('walks all matches without gaps or repeats, ties included', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 20; offset += 2)
      seen.push(...(await readAll({ limit: 2, offset })).body.map((c) => c.id));
    expect(seen).toEqual(inOrder(...allKeys()).map((c) => c.id));
  });

  it('counts only the matches of the filters', async () => {
    const page = await readAll({ status: 'INACTIVE', limit: 1 });
    expect(page.body).toEqual(inOrder('winter', 'underscore').slice(0, 1));
    expect(page.response.headers.get('x-total-count')).toBe('2');
  });

  it('answers [] past the end, still with the count', async () => {
    const page = await readAll({ limit: 10, offset: 100 });
    expect(page.body).toEqual([]);
    expect(page.response.headers.get('x-total-count')).toBe(String(allKeys().length));
  });

  it('accepts the bounds: limit 1 and limit 1000', async () => {
    expect((await readAll({ limit: 1 })).body).toEqual(inOrder(...allKeys()).slice(0, 1));
    expect((await readAll({ limit: 1_000 })).body).toEqual(inOrder(...allKeys()));
  });

  it('accepts offset on its own', async () => {
    const page = await readAll({ offset: 5 });
    expect(page.body).toEqual(inOrder(...allKeys()).slice(5));
    expect(page.response.headers.get('x-total-count')).toBe(String(allKeys().length));
  });

  it('counts 0 for a merchant with nothing', async () => {
    const page = await readAll({ limit: 5 }, empty);
    expect(page.body).toEqual([]);
    expect(page.response.headers.get('x-total-count')).toBe('0');
  });
});
