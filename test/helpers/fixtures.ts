import { randomBytes, randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { betSlipJson } from '../../src/api/bet-slip/bet-slip-json.js';
import { digestSessionToken, generateSessionToken } from '../../src/api/bet-slip/session-token.js';
import type { Db } from '../../src/shared/db/client.js';
import type {
  ConfigurationStatus,
  MerchantStatus,
  RewardStatus,
  RewardType,
  SignatureVersion,
} from '../../src/shared/db/schema.js';
import { KeyRing } from '../../src/shared/secrets/key-ring.js';
import { parseKeyRing } from '../../src/shared/secrets/key-ring-text.js';

/**
 * Test data inserted straight through Kysely, independent of the admin API, so that the merchant
 * routes can be tested on their own. Each function returns what the tests need to sign requests
 * and to state what the API must answer.
 */

type Instant = Date | number;

const toDate = (value: Instant): Date => (value instanceof Date ? value : new Date(value));

let sequence = 0;
const uniqueName = (prefix: string) => `${prefix} ${++sequence}-${randomBytes(3).toString('hex')}`;

export interface MerchantFixture {
  id: string;
  name: string;
  secretKey: string;
  status: MerchantStatus;
}

export interface MerchantOptions {
  /** A chosen id (a test that needs merchants spread over queue shards the same way on every run). */
  id?: string;
  name?: string;
  secretKey?: string;
  status?: MerchantStatus;
  /** null or absent: any source address. */
  allowedIps?: string[] | null;
  previousSecretKey?: string | null;
  previousSecretValidUntil?: Instant | null;
  rateLimitPerSecond?: number | null;
  /** 2: every request must also carry X-Signature (default 1). */
  signatureVersion?: SignatureVersion;
  /** true: the cancel and abort routes refuse version 1 (default false). */
  requireSignatureV2?: boolean;
}

/** The test run's key ring (global-setup.ts), as every process of the run has it. */
export function testKeyRing(): KeyRing {
  const parsed = parseKeyRing(inject('secretsKeys'));
  if (!parsed.ok) throw new Error(`the test run's key ring: ${parsed.reason}`);
  return new KeyRing(parsed.keys);
}

/** Secrets are stored sealed under the run's key ring, as the admin API stores them. */
export async function createMerchant(db: Db, options: MerchantOptions = {}): Promise<MerchantFixture> {
  const ring = testKeyRing();
  const id = options.id ?? randomUUID();
  const secretKey = options.secretKey ?? randomBytes(32).toString('hex');
  const row = await db
    .insertInto('merchants')
    .values({
      id,
      name: options.name ?? uniqueName('Merchant'),
      secret_key: ring.seal(secretKey, id, 'merchants.secret_key'),
      status: options.status ?? 'ACTIVE',
      allowed_ips: options.allowedIps ?? null,
      previous_secret_key:
        options.previousSecretKey == null
          ? null
          : ring.seal(options.previousSecretKey, id, 'merchants.previous_secret_key'),
      previous_secret_valid_until:
        options.previousSecretValidUntil == null ? null : toDate(options.previousSecretValidUntil),
      rate_limit_per_second: options.rateLimitPerSecond ?? null,
      signature_version: options.signatureVersion ?? 1,
      require_signature_v2: options.requireSignatureV2 ?? false,
    })
    .returning(['id', 'name', 'status'])
    .executeTakeFirstOrThrow();
  return { id: row.id, name: row.name, secretKey, status: row.status };
}

/** Amounts as decimal strings, stored as `numeric` exactly as written. */
interface BetConstraintInput {
  betAmount: string;
  maxWinPerBet: string;
}

interface GameInput {
  gameId: number;
  betConstraints: Record<string, BetConstraintInput>;
}

export interface ConfigurationOptions {
  merchantId: string;
  name?: string;
  externalId?: string | null;
  status?: ConfigurationStatus;
  rewardType?: RewardType;
  numberOfFreeBets?: number;
  startDate: Instant;
  /** Default: 30 days after startDate. */
  endDate?: Instant;
  /** Minutes. */
  duration?: number;
  games?: GameInput[];
}

/** A configuration as readAll must show it (docs/design.md §7). */
export interface ConfigurationView {
  id: string;
  name: string;
  status: ConfigurationStatus;
  rewardType: RewardType;
  numberOfFreeBets: number;
  startDate: number;
  endDate: number;
  duration: number;
  merchantId: string;
  games: Array<{
    id: string;
    gameId: number;
    betConstraints: Record<string, { betAmount: number; maxWinPerBet: number }>;
  }>;
}

export interface ConfigurationFixture {
  id: string;
  externalId: string | null;
  /** What readAll should answer for it, derived from the inputs (games ordered by gameId). */
  view: ConfigurationView;
}

export async function createConfiguration(db: Db, options: ConfigurationOptions): Promise<ConfigurationFixture> {
  const startDate = toDate(options.startDate);
  const endDate = toDate(options.endDate ?? startDate.getTime() + 30 * 24 * 60 * 60 * 1000);
  const games = options.games ?? [{ gameId: 1, betConstraints: { EUR: { betAmount: '1.00', maxWinPerBet: '100' } } }];

  return db.transaction().execute(async (trx) => {
    const configuration = await trx
      .insertInto('reward_configurations')
      .values({
        merchant_id: options.merchantId,
        external_id: options.externalId ?? null,
        name: options.name ?? uniqueName('Configuration'),
        status: options.status ?? 'ACTIVE',
        reward_type: options.rewardType ?? 'FREE_BET',
        number_of_free_bets: options.numberOfFreeBets ?? 10,
        start_date: startDate,
        end_date: endDate,
        duration_minutes: options.duration ?? 1_440,
      })
      .returningAll()
      .executeTakeFirstOrThrow();

    const viewGames: ConfigurationView['games'] = [];
    for (const game of games) {
      const { id } = await trx
        .insertInto('game_reward_configurations')
        .values({ reward_configuration_id: configuration.id, game_id: game.gameId })
        .returning('id')
        .executeTakeFirstOrThrow();
      const constraints = Object.entries(game.betConstraints);
      if (constraints.length > 0) {
        await trx
          .insertInto('bet_constraints')
          .values(
            constraints.map(([currency, amounts]) => ({
              game_reward_configuration_id: id,
              currency,
              bet_amount: amounts.betAmount,
              max_win_per_bet: amounts.maxWinPerBet,
            })),
          )
          .execute();
      }
      viewGames.push({
        id,
        gameId: game.gameId,
        betConstraints: Object.fromEntries(
          constraints.map(([currency, amounts]) => [
            currency,
            { betAmount: Number(amounts.betAmount), maxWinPerBet: Number(amounts.maxWinPerBet) },
          ]),
        ),
      });
    }
    viewGames.sort((a, b) => a.gameId - b.gameId);

    return {
      id: configuration.id,
      externalId: configuration.external_id,
      view: {
        id: configuration.id,
        name: configuration.name,
        status: configuration.status,
        rewardType: configuration.reward_type,
        numberOfFreeBets: configuration.number_of_free_bets,
        startDate: startDate.getTime(),
        endDate: endDate.getTime(),
        duration: configuration.duration_minutes,
        merchantId: configuration.merchant_id,
        games: viewGames,
      },
    };
  });
}

export interface RewardInput {
  playerId: string;
  externalId?: string | null;
  status?: RewardStatus;
}

export interface RewardFixture {
  id: string;
  externalId: string | null;
  playerId: string;
  rewardConfigurationId: string;
  status: RewardStatus;
}

/** Inserts the rewards in one statement; returned in the order given. */
export async function createRewards(
  db: Db,
  options: { merchantId: string; rewardConfigurationId: string; rewards: RewardInput[] },
): Promise<RewardFixture[]> {
  if (options.rewards.length === 0) return [];
  const rows = await db
    .insertInto('rewards')
    .values(
      options.rewards.map((reward) => ({
        merchant_id: options.merchantId,
        reward_configuration_id: options.rewardConfigurationId,
        player_id: reward.playerId,
        external_id: reward.externalId ?? null,
        status: reward.status ?? 'ACTIVE',
      })),
    )
    .returning(['id', 'external_id', 'player_id', 'reward_configuration_id', 'status'])
    .execute();
  return rows.map((row) => ({
    id: row.id,
    externalId: row.external_id,
    playerId: row.player_id,
    rewardConfigurationId: row.reward_configuration_id,
    status: row.status,
  }));
}

interface PlayerInput {
  username?: string;
  nickname?: string;
  firstName?: string;
  lastName?: string;
  gender?: string;
  email?: string;
  phone?: string;
  address?: string;
  city?: string;
  country?: string;
  language?: string;
  test?: boolean;
}

/** A bet slip item in the interface's field names (docs/design.md §8). */
export interface BetInput {
  sportId: string;
  sportName: string;
  betSlipId?: string;
  matchName: string;
  matchId: string;
  competitionId: string;
  competitionName: string;
  marketId: string;
  marketName: string;
  marketOptionId: string;
  marketOptionName: string;
  odd: number;
  margin: number | null;
  homeTeam: string;
  awayTeam: string;
}

export interface SessionOptions {
  merchantId: string;
  /** Default: a freshly generated token. */
  token?: string;
  playerId: string;
  currency?: string;
  /** Decimal string, stored as numeric. */
  balance?: string;
  /** null: never expires. Default: one hour from now. */
  expiresAt?: Instant | null;
  /** Player fields; the player row is created if it does not exist yet (an existing one is kept). */
  player?: PlayerInput;
  ipAddress?: string;
  devicePlatform?: string;
  betSlip?: BetInput[];
}

export interface SessionFixture {
  token: string;
  sessionId: string;
  playerId: string;
  currency: string;
}

export async function createSession(db: Db, options: SessionOptions): Promise<SessionFixture> {
  const token = options.token ?? generateSessionToken();
  const currency = options.currency ?? 'EUR';
  const player = options.player ?? {};
  const expiresAt =
    options.expiresAt === undefined
      ? new Date(Date.now() + 60 * 60 * 1000)
      : options.expiresAt === null
        ? null
        : toDate(options.expiresAt);

  const betSlip = (options.betSlip ?? []).map((bet) => ({ ...bet, betSlipId: bet.betSlipId ?? null }));

  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('players')
      .values({
        merchant_id: options.merchantId,
        player_id: options.playerId,
        username: player.username ?? null,
        nickname: player.nickname ?? null,
        first_name: player.firstName ?? null,
        last_name: player.lastName ?? null,
        gender: player.gender ?? null,
        email: player.email ?? null,
        phone: player.phone ?? null,
        address: player.address ?? null,
        city: player.city ?? null,
        country: player.country ?? null,
        language: player.language ?? null,
        test: player.test ?? false,
      })
      .onConflict((oc) => oc.columns(['merchant_id', 'player_id']).doNothing())
      .execute();
    await trx
      .insertInto('wallets')
      .values({
        merchant_id: options.merchantId,
        player_id: options.playerId,
        currency,
        balance: options.balance ?? '0',
      })
      .onConflict((oc) =>
        oc
          .columns(['merchant_id', 'player_id', 'currency'])
          .doUpdateSet((eb) => ({ balance: eb.ref('excluded.balance') })),
      )
      .execute();
    const session = await trx
      .insertInto('sessions')
      .values({
        merchant_id: options.merchantId,
        token_digest: digestSessionToken(token),
        player_id: options.playerId,
        currency,
        expires_at: expiresAt,
        ip_address: options.ipAddress ?? null,
        device_platform: options.devicePlatform ?? null,
        // Written with every session, as the service writes it: /betSlip answers the items from it.
        bet_slip_json: betSlipJson(betSlip),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const items = betSlip.map((bet, position) => ({
      session_id: session.id,
      position,
      sport_id: bet.sportId,
      sport_name: bet.sportName,
      bet_slip_id: bet.betSlipId,
      match_name: bet.matchName,
      match_id: bet.matchId,
      competition_id: bet.competitionId,
      competition_name: bet.competitionName,
      market_id: bet.marketId,
      market_name: bet.marketName,
      market_option_id: bet.marketOptionId,
      market_option_name: bet.marketOptionName,
      odd: bet.odd,
      margin: bet.margin,
      home_team: bet.homeTeam,
      away_team: bet.awayTeam,
    }));
    // Inserted last-first, so that an answer relying on physical row order rather than `position` shows.
    if (items.length > 0) await trx.insertInto('bet_slip_items').values(items.reverse()).execute();
    return { token, sessionId: session.id, playerId: options.playerId, currency };
  });
}

/** Changes a wallet's balance, as the merchant's wallet would between two requests. */
export async function setWalletBalance(
  db: Db,
  wallet: { merchantId: string; playerId: string; currency: string; balance: string },
): Promise<void> {
  await db
    .updateTable('wallets')
    .set({ balance: wallet.balance })
    .where('merchant_id', '=', wallet.merchantId)
    .where('player_id', '=', wallet.playerId)
    .where('currency', '=', wallet.currency)
    .execute();
}

/** A complete bet slip item; `overrides` replace single fields. */
export function bet(overrides: Partial<BetInput> = {}): BetInput {
  return {
    sportId: 'sr:sport:1',
    sportName: 'Soccer',
    betSlipId: 'slip-1',
    matchName: 'Home FC - Away United',
    matchId: 'sr:match:100',
    competitionId: 'sr:competition:17',
    competitionName: 'Premier League',
    marketId: '1',
    marketName: '1x2',
    marketOptionId: '1',
    marketOptionName: 'Home',
    odd: 1.85,
    margin: null,
    homeTeam: 'Home FC',
    awayTeam: 'Away United',
    ...overrides,
  };
}
