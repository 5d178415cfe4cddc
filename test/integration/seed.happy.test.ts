import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { digestSessionToken } from '../../src/api/bet-slip/session-token.js';
import type { Db } from '../../src/shared/db/client.js';
import { DEMO_MERCHANT } from '../../src/tools/seed/demo-data.js';
import { seedDemo } from '../../src/tools/seed/demo-seed.js';
import { DEFAULT_VOLUME, parseSeedArgs, type VolumeSeedOptions } from '../../src/tools/seed/seed-options.js';
import type { SeedReport } from '../../src/tools/seed/seed-report.js';
import { seedVolume } from '../../src/tools/seed/volume-seed.js';
import { buildSignedFields, toQueryString } from '../../src/tools/signed-request.js';
import { testKeyRing } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

const run = promisify(execFile);
const seedCliPath = fileURLToPath(new URL('../../src/tools/seed/seed.cli.ts', import.meta.url));

const { env, api } = useTestContext({ api: true });

/** Row counts of every table the seed writes, for one merchant. */
async function countRows(db: Db, merchantId: string): Promise<Record<string, number>> {
  const result = await sql<Record<string, string>>`
    SELECT
      (SELECT count(*) FROM merchants WHERE id = ${merchantId}) AS merchants,
      (SELECT count(*) FROM reward_configurations WHERE merchant_id = ${merchantId}) AS reward_configurations,
      (SELECT count(*) FROM game_reward_configurations g
        JOIN reward_configurations rc ON rc.id = g.reward_configuration_id
        WHERE rc.merchant_id = ${merchantId}) AS game_reward_configurations,
      (SELECT count(*) FROM bet_constraints bc
        JOIN game_reward_configurations g ON g.id = bc.game_reward_configuration_id
        JOIN reward_configurations rc ON rc.id = g.reward_configuration_id
        WHERE rc.merchant_id = ${merchantId}) AS bet_constraints,
      (SELECT count(*) FROM players WHERE merchant_id = ${merchantId}) AS players,
      (SELECT count(*) FROM wallets WHERE merchant_id = ${merchantId}) AS wallets,
      (SELECT count(*) FROM rewards WHERE merchant_id = ${merchantId}) AS rewards,
      (SELECT count(*) FROM sessions WHERE merchant_id = ${merchantId}) AS sessions,
      (SELECT count(*) FROM bet_slip_items b JOIN sessions s ON s.id = b.session_id
        WHERE s.merchant_id = ${merchantId}) AS bet_slip_items
  `.execute(db);
  return Object.fromEntries(Object.entries(result.rows[0]!).map(([table, count]) => [table, Number(count)]));
}

async function rewardStatuses(db: Db, merchantId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('rewards')
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('merchant_id', '=', merchantId)
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

describe('demo seed', () => {
  let first: SeedReport;
  let second: SeedReport;
  let countsAfterFirst: Record<string, number>;

  beforeAll(async () => {
    first = await seedDemo(env.db, testKeyRing());
    countsAfterFirst = await countRows(env.db, DEMO_MERCHANT.id);
    second = await seedDemo(env.db, testKeyRing());
  });

  it('creates the demo merchant, its configurations, players, wallets, rewards and sessions', async () => {
    expect(countsAfterFirst).toEqual({
      merchants: 1,
      reward_configurations: 3,
      game_reward_configurations: 4,
      bet_constraints: 7,
      players: 3,
      wallets: 3,
      rewards: 8,
      sessions: 2,
      bet_slip_items: 4,
    });
    const merchant = await env.db
      .selectFrom('merchants')
      .selectAll()
      .where('id', '=', DEMO_MERCHANT.id)
      .executeTakeFirstOrThrow();
    expect(merchant).toMatchObject({ name: 'Demo Casino', status: 'ACTIVE' });
    // Stored sealed for the demo merchant, like every secret.
    expect(merchant.secret_key).not.toContain('demo-secret-key-change-me');
    expect(testKeyRing().open(merchant.secret_key, DEMO_MERCHANT.id, 'merchants.secret_key')).toBe(
      'demo-secret-key-change-me',
    );
    expect(await rewardStatuses(env.db, DEMO_MERCHANT.id)).toEqual({ ACTIVE: 5, USED: 1, EXPIRED: 1, CANCELLED: 1 });
    const cancelled = await env.db
      .selectFrom('rewards')
      .select(['external_id', 'cancelled_at'])
      .where('status', '=', 'CANCELLED')
      .executeTakeFirstOrThrow();
    expect(cancelled.external_id).toBe('demo-reward-6');
    expect(cancelled.cancelled_at).toBeInstanceOf(Date);
    const statuses = await env.db
      .selectFrom('reward_configurations')
      .select('status')
      .where('merchant_id', '=', DEMO_MERCHANT.id)
      .orderBy('status')
      .execute();
    expect(statuses.map((row) => row.status)).toEqual(['ACTIVE', 'ACTIVE', 'INACTIVE']);
  });

  it('reports what the demo holds, and what each run inserted', () => {
    expect(first.merchants).toHaveLength(1);
    expect(first.merchants[0]).toEqual({
      id: DEMO_MERCHANT.id,
      name: 'Demo Casino',
      secretKey: 'demo-secret-key-change-me',
      configurationIds: [
        '10000000-0000-4000-8000-000000000001',
        '10000000-0000-4000-8000-000000000002',
        '10000000-0000-4000-8000-000000000003',
      ],
      playerIds: { first: 'demo-player-1', last: 'demo-player-3', count: 3 },
      sampleRewardIds: [
        '30000000-0000-4000-8000-000000000001',
        '30000000-0000-4000-8000-000000000002',
        '30000000-0000-4000-8000-000000000004',
        '30000000-0000-4000-8000-000000000007',
        '30000000-0000-4000-8000-000000000008',
      ],
      sampleRewardExternalIds: ['demo-reward-1', 'demo-reward-2', 'demo-reward-7'],
      sessionTokens: ['demo-session-token'],
      expiredSessionTokens: ['demo-expired-token'],
    });
    expect(first.totals).toEqual({ configurations: 3, players: 3, rewards: 8, sessions: 2 });
    expect(first.inserted).toEqual({ merchants: 1, configurations: 3, players: 3, rewards: 8, sessions: 2 });
    expect(second.inserted).toEqual({ merchants: 0, configurations: 0, players: 0, rewards: 0, sessions: 0 });
    expect(second.merchants).toEqual(first.merchants);
  });

  it('is idempotent: a second run changes no count', async () => {
    expect(await countRows(env.db, DEMO_MERCHANT.id)).toEqual(countsAfterFirst);
  });

  it('leaves rows changed since the first run as they are', async () => {
    await env.db
      .updateTable('rewards')
      .set({ status: 'CANCELLED' })
      .where('external_id', '=', 'demo-reward-7')
      .execute();
    const report = await seedDemo(env.db, testKeyRing());
    expect(report.inserted?.rewards).toBe(0);
    const reward = await env.db
      .selectFrom('rewards')
      .select('status')
      .where('external_id', '=', 'demo-reward-7')
      .executeTakeFirstOrThrow();
    expect(reward.status).toBe('CANCELLED');
    await env.db.updateTable('rewards').set({ status: 'ACTIVE' }).where('external_id', '=', 'demo-reward-7').execute();
  });

  it('with reset, puts changed rows back as written and keeps the counts', async () => {
    await env.db
      .updateTable('rewards')
      .set({ status: 'CANCELLED', cancelled_at: new Date() })
      .where('external_id', 'in', ['demo-reward-1', 'demo-reward-7'])
      .execute();
    await env.db
      .updateTable('merchants')
      .set({ secret_key: 'rotated-secret-0123456789', status: 'DISABLED' })
      .where('id', '=', DEMO_MERCHANT.id)
      .execute();
    const report = await seedDemo(env.db, testKeyRing(), { reset: true });
    expect(report.inserted).toMatchObject({ merchants: 1, rewards: 8, sessions: 2 });
    expect(await countRows(env.db, DEMO_MERCHANT.id)).toEqual(countsAfterFirst);
    expect(await rewardStatuses(env.db, DEMO_MERCHANT.id)).toEqual({ ACTIVE: 5, USED: 1, EXPIRED: 1, CANCELLED: 1 });
    const merchant = await env.db
      .selectFrom('merchants')
      .select(['secret_key', 'status'])
      .where('id', '=', DEMO_MERCHANT.id)
      .executeTakeFirstOrThrow();
    expect(merchant.status).toBe('ACTIVE');
    expect(testKeyRing().open(merchant.secret_key, DEMO_MERCHANT.id, 'merchants.secret_key')).toBe(
      DEMO_MERCHANT.secretKey,
    );
  });

  it('serves readAll to the demo merchant signed as `npm run sign` signs, every field as seeded', async () => {
    const response = await api.post(
      '/api/v1/integration/reward-configurations/readAll',
      buildSignedFields(DEMO_MERCHANT.id, DEMO_MERCHANT.secretKey, Date.now()),
    );
    expect(response.status).toBe(200);
    const text = await response.text();
    // The amounts reach the client exactly as seeded (numeric, never rounded through a double).
    expect(text).toMatch(/"betAmount"\s*:\s*0\.10\b/);
    expect(text).toMatch(/"maxWinPerBet"\s*:\s*250\.50\b/);
    const configurations = JSON.parse(text) as Array<{ id: string; status: string }>;
    // startDate descending: Weekend Boost (2026-06), Welcome (2026-01), Summer 2025 (2025-06).
    expect(configurations.map((configuration) => configuration.id)).toEqual([
      '10000000-0000-4000-8000-000000000002',
      '10000000-0000-4000-8000-000000000001',
      '10000000-0000-4000-8000-000000000003',
    ]);
    expect(configurations[1]).toEqual({
      id: '10000000-0000-4000-8000-000000000001',
      name: 'Welcome Free Bets',
      status: 'ACTIVE',
      rewardType: 'FREE_BET',
      numberOfFreeBets: 10,
      startDate: Date.UTC(2026, 0, 1),
      endDate: Date.UTC(2030, 11, 31, 23, 59, 59),
      duration: 10_080,
      merchantId: DEMO_MERCHANT.id,
      games: [
        {
          id: '20000000-0000-4000-8000-000000000001',
          gameId: 1001,
          betConstraints: {
            EUR: { betAmount: 0.1, maxWinPerBet: 50 },
            USD: { betAmount: 0.1, maxWinPerBet: 55 },
          },
        },
        {
          id: '20000000-0000-4000-8000-000000000002',
          gameId: 1002,
          betConstraints: {
            EUR: { betAmount: 1, maxWinPerBet: 250.5 },
            USD: { betAmount: 1.2, maxWinPerBet: 300 },
          },
        },
      ],
    });
    expect(configurations[2]?.status).toBe('INACTIVE');
  });

  const demoBetSlip = {
    playerId: 'demo-player-1',
    balance: 1250.75,
    currency: 'EUR',
    username: 'alice.demo',
    nickname: 'Ace',
    firstName: 'Alice',
    lastName: 'Martin',
    gender: 'F',
    email: 'alice@example.com',
    phone: '+35699000001',
    ipAddress: '203.0.113.10',
    language: 'ENG',
    devicePlatform: 'desktop',
    address: '1 Republic Street',
    city: 'Valletta',
    country: 'MT',
    test: false,
    errorCode: 0,
    errorMessage: '',
    betSlip: [
      {
        sportId: 'football',
        sportName: 'Football',
        betSlipId: 'demo-slip-1',
        matchName: 'Lions FC vs Tigers United',
        matchId: 'match-1001',
        competitionId: 'comp-premier',
        competitionName: 'Premier Demo League',
        marketId: 'market-1x2',
        marketName: 'Match result',
        marketOptionId: 'option-home',
        marketOptionName: 'Lions FC',
        odd: 1.85,
        margin: null,
        homeTeam: 'Lions FC',
        awayTeam: 'Tigers United',
      },
      {
        sportId: 'football',
        sportName: 'Football',
        betSlipId: 'demo-slip-1',
        matchName: 'Eagles vs Wolves',
        matchId: 'match-1002',
        competitionId: 'comp-premier',
        competitionName: 'Premier Demo League',
        marketId: 'market-total-goals',
        marketName: 'Total goals over/under',
        marketOptionId: 'option-over',
        marketOptionName: 'Over 2.5',
        odd: 2.1,
        margin: 2.5,
        homeTeam: 'Eagles',
        awayTeam: 'Wolves',
      },
      {
        sportId: 'basketball',
        sportName: 'Basketball',
        matchName: 'Harbour Sharks vs City Bulls',
        matchId: 'match-2001',
        competitionId: 'comp-hoops',
        competitionName: 'Demo Basketball Cup',
        marketId: 'market-handicap',
        marketName: 'Point handicap',
        marketOptionId: 'option-away-handicap',
        marketOptionName: 'City Bulls +4.5',
        odd: 1.95,
        margin: 4.5,
        homeTeam: 'Harbour Sharks',
        awayTeam: 'City Bulls',
      },
    ],
  };

  it('serves the demo session on POST /betSlip with every field as seeded', async () => {
    const response = await api.post(
      '/betSlip',
      buildSignedFields(DEMO_MERCHANT.id, DEMO_MERCHANT.secretKey, Date.now(), { authToken: 'demo-session-token' }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(demoBetSlip);
  });

  it('serves the same on GET /betSlip with the query string `npm run sign -- --query` prints', async () => {
    const fields = buildSignedFields(DEMO_MERCHANT.id, DEMO_MERCHANT.secretKey, Date.now(), {
      authToken: 'demo-session-token',
    });
    const response = await api.get(`/betSlip?${toQueryString(fields)}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(demoBetSlip);
  });

  it('answers TOKEN_EXPIRED for the demo expired token', async () => {
    const response = await api.post(
      '/betSlip',
      buildSignedFields(DEMO_MERCHANT.id, DEMO_MERCHANT.secretKey, Date.now(), { authToken: 'demo-expired-token' }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ errorCode: 9, errorMessage: expect.any(String) });
  });
});

describe('volume seed', () => {
  const options: VolumeSeedOptions = {
    merchants: 2,
    configurations: 3,
    gamesPerConfiguration: 2,
    players: 4,
    rewardsPerPlayer: 5,
    sessions: 3,
    betSlipItems: 2,
    statusMix: true,
  };
  let report: SeedReport;

  beforeAll(async () => {
    report = await seedVolume(env.db, testKeyRing(), options);
  });

  it('creates exactly the counted rows for every merchant', async () => {
    expect(report.merchants).toHaveLength(2);
    expect(report.totals).toEqual({ configurations: 6, players: 8, rewards: 40, sessions: 6 });
    for (const merchant of report.merchants) {
      expect(await countRows(env.db, merchant.id)).toEqual({
        merchants: 1,
        reward_configurations: 3,
        game_reward_configurations: 6,
        bet_constraints: 12,
        players: 4,
        wallets: 4,
        rewards: 20,
        sessions: 3,
        bet_slip_items: 6,
      });
    }
  });

  it('gives merchants random ids and distinct strong secrets, and reports their data', async () => {
    const [a, b] = report.merchants as [SeedReport['merchants'][number], SeedReport['merchants'][number]];
    expect(a.id).not.toBe(b.id);
    expect(a.id).not.toBe(DEMO_MERCHANT.id);
    expect(a.secretKey).not.toBe(b.secretKey);
    for (const merchant of report.merchants) {
      expect(merchant.secretKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const stored = await env.db
        .selectFrom('merchants')
        .select(['secret_key', 'status'])
        .where('id', '=', merchant.id)
        .executeTakeFirstOrThrow();
      expect(stored.status).toBe('ACTIVE');
      expect(stored.secret_key).not.toContain(merchant.secretKey);
      expect(testKeyRing().open(stored.secret_key, merchant.id, 'merchants.secret_key')).toBe(merchant.secretKey);
      expect(merchant.playerIds).toEqual({ first: 'player-000001', last: 'player-000004', count: 4 });
      expect(merchant.configurationIds).toHaveLength(3);
      expect(merchant.sessionTokens).toHaveLength(3);
      expect(merchant.sampleRewardIds).toHaveLength(5);
      const samples = await env.db
        .selectFrom('rewards')
        .select(['merchant_id', 'status'])
        .where('id', 'in', merchant.sampleRewardIds)
        .execute();
      expect(samples).toHaveLength(5);
      expect(samples.every((row) => row.merchant_id === merchant.id && row.status === 'ACTIVE')).toBe(true);
    }
  });

  it('names players and rewards deterministically and links rewards to the merchant’s own configurations', async () => {
    for (const merchant of report.merchants) {
      const rewards = await env.db
        .selectFrom('rewards')
        .select(['player_id', 'external_id', 'reward_configuration_id'])
        .where('merchant_id', '=', merchant.id)
        .orderBy('player_id')
        .orderBy('external_id')
        .execute();
      const expectedExternalIds = ['player-000001', 'player-000002', 'player-000003', 'player-000004'].flatMap(
        (player) => [1, 2, 3, 4, 5].map((n) => `r-${player}-${n}`),
      );
      expect(rewards.map((reward) => reward.external_id)).toEqual(expectedExternalIds);
      expect(rewards.every((reward) => reward.external_id?.startsWith(`r-${reward.player_id}-`))).toBe(true);
      expect(new Set(rewards.map((reward) => reward.reward_configuration_id))).toEqual(
        new Set(merchant.configurationIds),
      );
      const players = await env.db
        .selectFrom('players')
        .innerJoin('wallets', (join) =>
          join
            .onRef('wallets.merchant_id', '=', 'players.merchant_id')
            .onRef('wallets.player_id', '=', 'players.player_id'),
        )
        .selectAll()
        .where('players.merchant_id', '=', merchant.id)
        .orderBy('players.player_id')
        .execute();
      expect(players.map((player) => [player.player_id, player.currency])).toEqual([
        ['player-000001', 'EUR'],
        ['player-000002', 'USD'],
        ['player-000003', 'EUR'],
        ['player-000004', 'USD'],
      ]);
      for (const player of players) {
        for (const field of ['username', 'nickname', 'first_name', 'last_name', 'gender', 'email', 'phone'] as const) {
          expect(player[field], field).toEqual(expect.any(String));
        }
        expect(player.address).toEqual(expect.any(String));
        expect(player.city).toEqual(expect.any(String));
        expect(player.country).toMatch(/^[A-Z]{2}$/);
        expect(Number(player.balance)).toBeGreaterThan(0);
      }
    }
  });

  it('makes 2 of every 20 rewards USED and 1 EXPIRED with --status-mix', async () => {
    for (const merchant of report.merchants) {
      expect(await rewardStatuses(env.db, merchant.id)).toEqual({ ACTIVE: 17, USED: 2, EXPIRED: 1 });
    }
  });

  it('makes every reward ACTIVE without --status-mix, also across several INSERT statements', async () => {
    // 10 rewards per player and 70 per statement: 7 players per statement, 5 statements, the last one short.
    const plain = await seedVolume(
      env.db,
      testKeyRing(),
      { ...DEFAULT_VOLUME, configurations: 2, players: 30, rewardsPerPlayer: 10, sessions: 0 },
      { rewardsPerStatement: 70 },
    );
    const [merchant] = plain.merchants;
    expect(plain.totals).toEqual({ configurations: 2, players: 30, rewards: 300, sessions: 0 });
    expect(await rewardStatuses(env.db, merchant!.id)).toEqual({ ACTIVE: 300 });
    const perPlayer = await sql<{ player_id: string; rewards: string; external_ids: string }>`
      SELECT player_id, count(*) AS rewards, string_agg(external_id, ',' ORDER BY external_id) AS external_ids
      FROM rewards WHERE merchant_id = ${merchant!.id}
      GROUP BY player_id ORDER BY player_id
    `.execute(env.db);
    expect(perPlayer.rows).toHaveLength(30);
    perPlayer.rows.forEach((row, index) => {
      const player = `player-${String(index + 1).padStart(6, '0')}`;
      expect(row.player_id).toBe(player);
      expect(row.rewards).toBe('10');
      const expected = Array.from({ length: 10 }, (_, n) => `r-${player}-${n + 1}`).sort();
      expect(row.external_ids).toBe(expected.join(','));
    });
    expect(merchant!.sessionTokens).toEqual([]);
  });

  it('stores only digests of session tokens, each session with its items in order and a null margin', async () => {
    for (const merchant of report.merchants) {
      const digests = merchant.sessionTokens.map(digestSessionToken);
      const sessions = await env.db
        .selectFrom('sessions')
        .select(['id', 'merchant_id', 'player_id', 'currency', 'expires_at', 'token_digest'])
        .where('token_digest', 'in', digests)
        .orderBy('player_id')
        .execute();
      expect(sessions.map((session) => [session.merchant_id, session.player_id, session.currency])).toEqual([
        [merchant.id, 'player-000001', 'EUR'],
        [merchant.id, 'player-000002', 'USD'],
        [merchant.id, 'player-000003', 'EUR'],
      ]);
      for (const session of sessions) {
        expect(session.expires_at!.getTime()).toBeGreaterThan(Date.now());
        const items = await env.db
          .selectFrom('bet_slip_items')
          .select(['position', 'margin', 'odd'])
          .where('session_id', '=', session.id)
          .orderBy('position')
          .execute();
        expect(items).toEqual([
          { position: 0, margin: null, odd: 1.6 },
          { position: 1, margin: 2.5, odd: 1.7 },
        ]);
      }
    }
  });

  it('lets a generated merchant sign a /betSlip call with its own secret and session token', async () => {
    const merchant = report.merchants[1]!;
    const response = await api.post(
      '/betSlip',
      buildSignedFields(merchant.id, merchant.secretKey, Date.now(), { authToken: merchant.sessionTokens[1] }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { betSlip: Array<{ margin: number | null }> };
    expect(body).toMatchObject({ playerId: 'player-000002', currency: 'USD', errorCode: 0, test: false });
    expect(body.betSlip).toHaveLength(2);
    expect(body.betSlip[0]?.margin).toBeNull();

    const readAll = await api.post(
      '/api/v1/integration/reward-configurations/readAll',
      buildSignedFields(merchant.id, merchant.secretKey, Date.now()),
    );
    const configurations = (await readAll.json()) as Array<{ id: string; games: unknown[] }>;
    expect(new Set(configurations.map((configuration) => configuration.id))).toEqual(
      new Set(merchant.configurationIds),
    );
    expect(configurations.every((configuration) => configuration.games.length === 2)).toBe(true);
  });
});

describe('seed arguments', () => {
  it('loads the demo set without flags, and a volume with any volume flag (defaults for the rest)', () => {
    expect(parseSeedArgs([])).toEqual({ kind: 'demo', reset: false });
    expect(parseSeedArgs(['--reset'])).toEqual({ kind: 'demo', reset: true });
    expect(parseSeedArgs(['--reset', '--players', '5'])).toMatchObject({ kind: 'invalid' });
    expect(parseSeedArgs(['--players', '10000', '--rewards-per-player', '100'])).toEqual({
      kind: 'volume',
      options: { ...DEFAULT_VOLUME, players: 10_000, rewardsPerPlayer: 100 },
    });
    expect(parseSeedArgs(['--status-mix'])).toEqual({
      kind: 'volume',
      options: { ...DEFAULT_VOLUME, statusMix: true },
    });
    expect(parseSeedArgs(['--help'])).toEqual({ kind: 'help' });
  });

  it.each([
    [['--merchants', 'two'], /--merchants must be a whole number/],
    [['--players', '1.5'], /--players must be a whole number/],
    [['--players=-3'], /--players must be a whole number/],
    [['--merchants', '0'], /--merchants must be at least 1/],
    [['--configurations', '0'], /--configurations must be at least 1/],
    [['--players', '0', '--sessions', '1'], /--players must be at least 1/],
    [['--players', '10000000', '--rewards-per-player', '100'], /at most 100000000/],
    [['--rewards'], /Unknown option '--rewards'/],
    [['extra'], /positional/i],
  ])('rejects %j', (argv, message) => {
    const command = parseSeedArgs(argv);
    expect(command.kind).toBe('invalid');
    expect(command.kind === 'invalid' && command.message).toMatch(message);
  });
});

describe('seed.cli.ts as a process', () => {
  const childEnv = () => ({
    PATH: process.env.PATH,
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    SECRETS_KEYS: env.secretsKeys,
    LOG_LEVEL: 'info',
  });

  it('prints the demo report as one JSON document on stdout and logs on stderr', async () => {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', seedCliPath], { env: childEnv() });
    const report = JSON.parse(stdout) as SeedReport;
    expect(report.merchants[0]).toMatchObject({
      id: DEMO_MERCHANT.id,
      secretKey: DEMO_MERCHANT.secretKey,
      sessionTokens: ['demo-session-token'],
      expiredSessionTokens: ['demo-expired-token'],
    });
    expect(report.totals).toEqual({ configurations: 3, players: 3, rewards: 8, sessions: 2 });
    expect(report.ms).toEqual(expect.any(Number));
    expect(stderr).toContain('"msg":"seed complete"');
  });

  it('prints at most five session tokens for a volume', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', seedCliPath, '--players', '3', '--sessions', '7', '--rewards-per-player', '2'],
      { env: childEnv() },
    );
    const report = JSON.parse(stdout) as SeedReport;
    expect(report.totals).toEqual({ configurations: 5, players: 3, rewards: 6, sessions: 7 });
    expect(report.merchants[0]!.sessionTokens).toHaveLength(5);
    expect(report.merchants[0]!.sampleRewardIds).toHaveLength(5);
  });

  it('exits with code 2 on a bad flag, before touching the database', async () => {
    const failure = await run(process.execPath, ['--import', 'tsx', seedCliPath, '--players', 'many'], {
      env: { PATH: process.env.PATH },
    }).then(
      () => null,
      (error: { code: number; stderr: string; stdout: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(/^seed: --players must be a whole number/);
    expect(failure?.stdout).toBe('');
  });

  it('prints usage for --help', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', seedCliPath, '--help'], {
      env: { PATH: process.env.PATH },
    });
    expect(stdout).toMatch(/^Usage: npm run seed/);
    expect(stdout).toContain('--rewards-per-player N');
  });
});
