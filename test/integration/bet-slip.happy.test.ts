import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { findBetSlipSession } from '../../src/api/library-bypasses/bet-slip-session.js';
import { createDb } from '../../src/shared/db/client.js';
import {
  bet,
  createMerchant,
  createSession,
  type MerchantFixture,
  type SessionOptions,
  setWalletBalance,
} from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/** docs/design.md §8: /betSlip answers the session's player, wallet and bet slip, by POST and by GET. */

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

const methods = [
  {
    method: 'POST',
    request: (token: string) => api.post('/betSlip', signedBody(merchant, { authToken: token })),
  },
  {
    method: 'GET',
    request: (token: string) => {
      const query = new URLSearchParams(
        Object.entries(signedBody(merchant, { authToken: token })).map(([key, value]): [string, string] => [
          key,
          String(value),
        ]),
      );
      return api.get(`/betSlip?${query}`);
    },
  },
] as const;

let playerSequence = 0;
const session = (options: Partial<SessionOptions> = {}) =>
  createSession(env.db, { merchantId: merchant.id, playerId: `player-${++playerSequence}`, ...options });

const fullPlayer = {
  username: 'jdoe',
  nickname: 'Lucky J',
  firstName: 'Jane',
  lastName: 'Doe',
  gender: 'female',
  email: 'jane.doe@example.com',
  phone: '+44 20 7946 0000',
  address: '1 High Street',
  city: 'London',
  country: 'GB',
  language: 'ENG',
  test: true,
};

describe.each(methods)('$method /betSlip', ({ request }) => {
  async function answer(token: string): Promise<{ text: string; body: Record<string, unknown> }> {
    const response = await request(token);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    return { text, body: JSON.parse(text) as Record<string, unknown> };
  }

  it('answers every field of a fully described session', async () => {
    const items = [
      bet({ betSlipId: 'slip-9', odd: 1.85, margin: 0.05 }),
      bet({
        sportId: 'sr:sport:2',
        sportName: 'Basketball',
        betSlipId: 'slip-9',
        matchName: 'Lakers - Celtics',
        matchId: 'sr:match:200',
        competitionId: 'sr:competition:132',
        competitionName: 'NBA',
        marketId: '225',
        marketName: 'Total points',
        marketOptionId: '13',
        marketOptionName: 'Over 210.5',
        odd: 1.9,
        margin: 210.5,
        homeTeam: 'Lakers',
        awayTeam: 'Celtics',
      }),
    ];
    const created = await session({
      currency: 'GBP',
      balance: '1234.56',
      player: fullPlayer,
      ipAddress: '203.0.113.7',
      devicePlatform: 'mobile',
      betSlip: items,
    });

    const { body } = await answer(created.token);
    expect(body).toEqual({
      playerId: created.playerId,
      balance: 1234.56,
      currency: 'GBP',
      username: 'jdoe',
      nickname: 'Lucky J',
      firstName: 'Jane',
      lastName: 'Doe',
      gender: 'female',
      email: 'jane.doe@example.com',
      phone: '+44 20 7946 0000',
      ipAddress: '203.0.113.7',
      language: 'ENG',
      devicePlatform: 'mobile',
      address: '1 High Street',
      city: 'London',
      country: 'GB',
      test: true,
      errorCode: 0,
      errorMessage: '',
      betSlip: [
        {
          sportId: 'sr:sport:1',
          sportName: 'Soccer',
          betSlipId: 'slip-9',
          matchName: 'Home FC - Away United',
          matchId: 'sr:match:100',
          competitionId: 'sr:competition:17',
          competitionName: 'Premier League',
          marketId: '1',
          marketName: '1x2',
          marketOptionId: '1',
          marketOptionName: 'Home',
          odd: 1.85,
          margin: 0.05,
          homeTeam: 'Home FC',
          awayTeam: 'Away United',
        },
        {
          sportId: 'sr:sport:2',
          sportName: 'Basketball',
          betSlipId: 'slip-9',
          matchName: 'Lakers - Celtics',
          matchId: 'sr:match:200',
          competitionId: 'sr:competition:132',
          competitionName: 'NBA',
          marketId: '225',
          marketName: 'Total points',
          marketOptionId: '13',
          marketOptionName: 'Over 210.5',
          odd: 1.9,
          margin: 210.5,
          homeTeam: 'Lakers',
          awayTeam: 'Celtics',
        },
      ],
    });
  });

  it('leaves out the optional fields that are not known, and defaults language and test', async () => {
    const created = await session({ currency: 'EUR', balance: '10' });
    const { body } = await answer(created.token);
    expect(body).toEqual({
      playerId: created.playerId,
      balance: 10,
      currency: 'EUR',
      language: 'ENG',
      test: false,
      errorCode: 0,
      errorMessage: '',
      betSlip: [],
    });
    for (const optional of ['username', 'nickname', 'firstName', 'lastName', 'gender', 'email', 'phone']) {
      expect(body).not.toHaveProperty(optional);
    }
    for (const optional of ['ipAddress', 'devicePlatform', 'address', 'city', 'country']) {
      expect(body).not.toHaveProperty(optional);
    }
  });

  it('answers profile text with quotes, backslashes, control characters and non-ASCII exactly as stored', async () => {
    const awkward = 'Jo "the hand" O\\Neil\ttab\nline\u0001 é 中 😀 </script>';
    const created = await session({
      ipAddress: '2001:db8::1',
      devicePlatform: 'web "beta"',
      player: { nickname: awkward, city: 'São Paulo', address: 'Rua "A", 1\\2', username: '' },
    });
    const { body } = await answer(created.token);
    expect(body).toMatchObject({
      nickname: awkward,
      city: 'São Paulo',
      address: 'Rua "A", 1\\2',
      username: '',
      ipAddress: '2001:db8::1',
      devicePlatform: 'web "beta"',
    });
    // In the interface's order, the unknown ones left out.
    expect(Object.keys(body)).toEqual([
      'playerId',
      'balance',
      'currency',
      'username',
      'nickname',
      'ipAddress',
      'language',
      'devicePlatform',
      'address',
      'city',
      'test',
      'errorCode',
      'errorMessage',
      'betSlip',
    ]);
  });

  it('answers a stored language and a false test flag as they are', async () => {
    const created = await session({ player: { language: 'DEU', test: false, nickname: 'Max' } });
    const { body } = await answer(created.token);
    expect(body).toMatchObject({ language: 'DEU', test: false, nickname: 'Max' });
    expect(body).not.toHaveProperty('username');
  });

  it('answers the items in their stored order, keeping margin null and leaving out an unknown betSlipId', async () => {
    const items = Array.from({ length: 12 }, (_, i) =>
      bet({
        matchId: `sr:match:${1000 - i}`,
        marketOptionName: `Option ${i}`,
        odd: 1 + i / 8,
        margin: i % 3 === 0 ? null : i / 100,
        betSlipId: i % 2 === 0 ? undefined : `slip-${i}`,
      }),
    );
    const created = await session({ betSlip: items });
    const { text, body } = await answer(created.token);
    const slip = body.betSlip as Array<Record<string, unknown>>;
    expect(slip.map((item) => item.matchId)).toEqual(items.map((item) => item.matchId));
    expect(slip.map((item) => item.odd)).toEqual(items.map((item) => item.odd));
    expect(slip.map((item) => item.margin)).toEqual(items.map((item) => item.margin));
    for (const [i, item] of slip.entries()) {
      if (i % 2 === 0) expect(item).not.toHaveProperty('betSlipId');
      else expect(item.betSlipId).toBe(`slip-${i}`);
      // margin is required-or-null: present as null, not left out.
      expect(item).toHaveProperty('margin');
    }
    expect(text).toMatch(/"margin"\s*:\s*null/);
  });

  it('writes odd, margin and balance as JSON numbers', async () => {
    const created = await session({ balance: '0.10', betSlip: [bet({ odd: 2.5, margin: 0.25 })] });
    const { text, body } = await answer(created.token);
    expect(text).toMatch(/"balance"\s*:\s*0\.10?\s*[,}]/);
    expect(text).toMatch(/"odd"\s*:\s*2\.5\s*[,}]/);
    expect(text).toMatch(/"margin"\s*:\s*0\.25\s*[,}]/);
    expect(body.balance).toBe(0.1);
  });

  it('answers the balance exactly as stored, without rounding', async () => {
    const created = await session({ balance: '98765432109876543.21' });
    const { text } = await answer(created.token);
    expect(text).toMatch(/"balance"\s*:\s*98765432109876543\.21\s*[,}]/);
  });

  it('answers a zero and a negative balance', async () => {
    const zero = await session({ balance: '0' });
    expect((await answer(zero.token)).body.balance).toBe(0);
    const negative = await session({ balance: '-5.75' });
    expect((await answer(negative.token)).body.balance).toBe(-5.75);
  });

  it('answers the balance at the time of the request', async () => {
    const created = await session({ currency: 'EUR', balance: '50.00' });
    expect((await answer(created.token)).body.balance).toBe(50);
    await setWalletBalance(env.db, {
      merchantId: merchant.id,
      playerId: created.playerId,
      currency: 'EUR',
      balance: '7.25',
    });
    expect((await answer(created.token)).body.balance).toBe(7.25);
  });

  it('answers the wallet in the session currency when the player has several', async () => {
    const playerId = `multi-currency-${++playerSequence}`;
    const eur = await createSession(env.db, { merchantId: merchant.id, playerId, currency: 'EUR', balance: '11' });
    const usd = await createSession(env.db, { merchantId: merchant.id, playerId, currency: 'USD', balance: '22' });
    expect((await answer(eur.token)).body).toMatchObject({ currency: 'EUR', balance: 11 });
    expect((await answer(usd.token)).body).toMatchObject({ currency: 'USD', balance: 22 });
  });

  it('accepts a session that never expires', async () => {
    const created = await session({ expiresAt: null });
    expect((await answer(created.token)).body).toMatchObject({ errorCode: 0, playerId: created.playerId });
  });

  it('accepts tokens with characters that need escaping', async () => {
    const created = await session({ token: `a+b/c=d&e?f g%20h#i-${++playerSequence}` });
    expect((await answer(created.token)).body).toMatchObject({ errorCode: 0, playerId: created.playerId });
  });

  it('answers the same player for the same token twice (reading changes nothing)', async () => {
    const created = await session({ balance: '3.5', betSlip: [bet()] });
    const first = await answer(created.token);
    const second = await answer(created.token);
    expect(second.body).toEqual(first.body);
  });
});

describe('both methods', () => {
  it('answer the same body for the same session', async () => {
    const created = await session({ player: fullPlayer, betSlip: [bet(), bet({ margin: 1.5 })], balance: '42.42' });
    // One after the other: a GET binds its URL's triple, so a POST signed in the same millisecond and
    // sent after it would be refused (docs/design.md, "Threat model").
    const post = await methods[0].request(created.token);
    const get = await methods[1].request(created.token);
    expect(await post.json()).toEqual(await get.json());
  });
});

describe('the read', () => {
  it('is a prepared statement, planned once per connection, and answers fresh balances from it', async () => {
    const db = createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: 'rewards-test-prepared' });
    try {
      const created = await session({ currency: 'EUR', balance: '7.25', betSlip: [bet()] });
      expect((await findBetSlipSession(db, merchant.id, created.token))?.balance).toBe('7.25');
      const prepared = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements`.execute(db);
      expect(prepared.rows.map((row) => row.name)).toContain('find-bet-slip-session');
      // The same connection runs the same statement again: the plan is reused, the data is not.
      await setWalletBalance(env.db, {
        merchantId: merchant.id,
        playerId: created.playerId,
        currency: 'EUR',
        balance: '8.50',
      });
      expect((await findBetSlipSession(db, merchant.id, created.token))?.balance).toBe('8.50');
      expect(await findBetSlipSession(db, merchant.id, 'no-such-token')).toBeUndefined();
    } finally {
      await db.destroy();
    }
  });
});
