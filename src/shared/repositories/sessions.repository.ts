import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import type { BetSlipItemsTable, Database, PlayersTable } from '../db/schema.js';
import { digestSessionToken } from '../session-token.js';

export interface BetSlipLookup {
  merchantId: string;
  expiresAt: Date | null;
  /** The response object without `betSlip`, as JSON text, optional fields that are unknown left out. */
  playerJson: string;
  /** The bet slip items in stored order, as JSON text. */
  betSlipJson: string;
}

/**
 * One indexed lookup by token digest. Postgres writes the JSON so that `balance` (numeric) reaches
 * the client exactly as stored. Optional player fields that are NULL are stripped; `margin` is kept
 * as null on purpose, so items are built apart from the stripped object.
 */
export async function findBetSlipByToken(db: Kysely<Database>, token: string): Promise<BetSlipLookup | undefined> {
  const result = await sql<BetSlipLookup>`
    SELECT
      s.merchant_id AS "merchantId",
      s.expires_at AS "expiresAt",
      json_strip_nulls(json_build_object(
        'playerId', s.player_id,
        'balance', w.balance,
        'currency', s.currency,
        'username', p.username,
        'nickname', p.nickname,
        'firstName', p.first_name,
        'lastName', p.last_name,
        'gender', p.gender,
        'email', p.email,
        'phone', p.phone,
        'ipAddress', s.ip_address,
        'language', coalesce(p.language, 'ENG'),
        'devicePlatform', s.device_platform,
        'address', p.address,
        'city', p.city,
        'country', p.country,
        'test', coalesce(p.test, false),
        'errorCode', 0,
        'errorMessage', ''
      ))::text AS "playerJson",
      (
        SELECT coalesce(json_agg(
          json_build_object(
            'sportId', b.sport_id,
            'sportName', b.sport_name,
            'betSlipId', b.bet_slip_id,
            'matchName', b.match_name,
            'matchId', b.match_id,
            'competitionId', b.competition_id,
            'competitionName', b.competition_name,
            'marketId', b.market_id,
            'marketName', b.market_name,
            'marketOptionId', b.market_option_id,
            'marketOptionName', b.market_option_name,
            'odd', b.odd,
            'margin', b.margin,
            'homeTeam', b.home_team,
            'awayTeam', b.away_team
          ) ORDER BY b.position
        ), '[]'::json)
        FROM bet_slip_items b
        WHERE b.session_id = s.id
      )::text AS "betSlipJson"
    FROM sessions s
    JOIN wallets w ON w.merchant_id = s.merchant_id AND w.player_id = s.player_id AND w.currency = s.currency
    LEFT JOIN players p ON p.merchant_id = s.merchant_id AND p.player_id = s.player_id
    WHERE s.token_digest = ${digestSessionToken(token)}
  `.execute(db);
  return result.rows[0];
}

/** Player profile fields: absent (undefined) keeps what is stored, null clears it. */
export type PlayerProfile = Partial<Omit<PlayersTable, 'merchant_id' | 'player_id' | 'test'>> & { test?: boolean };

export interface BetSlipItemInput {
  sportId: string;
  sportName: string;
  betSlipId: string | null;
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

export interface NewSession {
  merchantId: string;
  playerId: string;
  /** The clear token; only its digest is stored. */
  token: string;
  currency: string;
  /** Decimal text. */
  balance: string;
  expiresAt: Date | null;
  ipAddress: string | null;
  devicePlatform: string | null;
  player: PlayerProfile;
  betSlip: readonly BetSlipItemInput[];
}

/** Name of the unique constraint on token digests (Postgres' default name for the column's UNIQUE). */
export const SESSION_TOKEN_DIGEST_KEY = 'sessions_token_digest_key';

/**
 * Everything /betSlip reads for one session, written in the caller's transaction: the player
 * (created, or its given fields updated), the wallet in the session's currency (its balance set),
 * the session, and its bet slip items in order. One statement each.
 */
export async function insertSession(trx: Transaction<Database>, session: NewSession): Promise<void> {
  const { merchantId, playerId } = session;
  const profile = Object.fromEntries(Object.entries(session.player).filter(([, value]) => value !== undefined));
  await trx
    .insertInto('players')
    .values({ ...profile, merchant_id: merchantId, player_id: playerId })
    .onConflict((oc) =>
      Object.keys(profile).length === 0
        ? oc.columns(['merchant_id', 'player_id']).doNothing()
        : oc.columns(['merchant_id', 'player_id']).doUpdateSet(profile),
    )
    .execute();

  await trx
    .insertInto('wallets')
    .values({ merchant_id: merchantId, player_id: playerId, currency: session.currency, balance: session.balance })
    .onConflict((oc) =>
      oc
        .columns(['merchant_id', 'player_id', 'currency'])
        .doUpdateSet((eb) => ({ balance: eb.ref('excluded.balance'), updated_at: sql<Date>`now()` })),
    )
    .execute();

  const { id: sessionId } = await trx
    .insertInto('sessions')
    .values({
      merchant_id: merchantId,
      token_digest: digestSessionToken(session.token),
      player_id: playerId,
      currency: session.currency,
      expires_at: session.expiresAt,
      ip_address: session.ipAddress,
      device_platform: session.devicePlatform,
    })
    .returning('id')
    .executeTakeFirstOrThrow();

  if (session.betSlip.length === 0) return;
  await trx
    .insertInto('bet_slip_items')
    .values(session.betSlip.map((bet, position) => betSlipItemRow(sessionId, bet, position)))
    .execute();
}

/** One bet slip item as a row of `bet_slip_items`: the one place its columns are mapped. */
export function betSlipItemRow(
  sessionId: string,
  bet: BetSlipItemInput,
  position: number,
): Insertable<BetSlipItemsTable> {
  return {
    session_id: sessionId,
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
  };
}
